#!/usr/bin/env bash
# Session 32, run 5 (timing only). carry [".gl", ".pk"]; packed on main:
# `bash bench/pack_gpu.sh s0=c0dce46:turboprof s1=5113649:turboprof s2=929817b:turboprof s3=c9a8f31:turboprof`
# (branch diag-prostamp: the timeline's slot 6, the 'rows' column, stamped by subgroup N of the
# fresh split as it reaches the prologue's barrier, instead of by subgroup 0 after its rows).
# Run 3-4: turbo2's fresh split is the last, its prologue ~3.3-3.8 us while its K row is done at
# ~2.2; which subgroup arrives last at that barrier? (pair form: 0 quantizes K, 1 V, 2 and 3 take
# two query rows each and the tables.)
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tls turbo2,turbo3,turbo4 4097 main s0 s1 s2 s3
cat $R/progress.txt $R/device.txt
cut -c1-250 $R/tl.txt
