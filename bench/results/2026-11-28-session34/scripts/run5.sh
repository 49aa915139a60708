#!/usr/bin/env bash
# carry [".gl", ".pk"]; packed on branch diag-nob (off main c251ae0):
# `bash bench/pack_gpu.sh base=c251ae0:turboprof,bench_append`
# main = diag-nob: the fresh tiles' new bits not rebuilt (zeros stored: wrong results, timing only).
# base = main c251ae0 (kernels of be64a93).
# Question: how much of the fused step's excess over the decode step is the rebuild (session 33's
# ~1.3 us in one subgroup)? If most of turbo2's ~5%, a rebuild in the quantizer's lanes is worth it.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tls turbo2,turbo3,turbo4 4097 base main
apps 3 turbo2,turbo3,turbo4 base main
cat "$R/progress.txt" "$R/device.txt"
append_summary
cut -c1-250 "$R/tl.txt"
