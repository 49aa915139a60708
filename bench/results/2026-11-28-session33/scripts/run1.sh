#!/usr/bin/env bash
# Session 33, run 1. carry [".gl", ".pk"]; packed on main be64a93:
# `bash bench/pack_gpu.sh s0=c0dce46:turboprof s1=5113649:turboprof s2=929817b:turboprof s3=c9a8f31:turboprof fwm=28098e5:test_decode_tc,test_append_decode,bench_append,turboprof`
# (1) fw-masks (28098e5): the fetch's rebuild returns the new bits' mask from its own loop.
#     Expected: its tc tests pass; fused rows the same or a little faster (fewer instructions in
#     the first fetch of the new tile).
# (2) diag-prostamp s0..s3: slot 6 (the 'rows' column) stamped by subgroup N of the fresh split
#     at the prologue's barrier. Session 32: turbo2's fresh split is last, prologue 3.3 us while
#     its K row is done at ~2.2. Which subgroup arrives last? (pair form: 0 quantizes K, 1 V,
#     2 and 3 take two query rows each and the tables.)
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst fwm-tc 240 build-slim/tests/test_decode_tc-fwm &
tst fwm-app 240 build-slim/tests/test_append_decode-fwm &
wait
tls turbo2,turbo3,turbo4 4097 main s0 s1 s2 s3 fwm
apps 2 turbo2,turbo3,turbo4 main fwm
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
