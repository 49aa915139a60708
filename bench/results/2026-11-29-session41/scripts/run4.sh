#!/usr/bin/env bash
# Session 41, run 4. Pack: bash bench/pack_gpu.sh old=8b0c677:bench_append (main at the commit
# "bench_append: the decode way's steps at the appending ways' lengths"). Run 3's per-step
# rollback measured only the fused call's slowest place (the new token ending a full split). Now
# every way's step i attends ctx + i tokens, 128 steps. Prediction: turbo4 ~11% -> ~2-4% (both
# ways mostly on the 64-entry plan past 4096); the other types near session 40's 2-4%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
# (app allows 90 s a call: four rows a call)
all() { for t in turbo4,turbo3 turbo2,q8_0 f16; do TKV_BENCH_TYPES=$t app append.txt "$1 $2 4k" $2 fused/llama8b; done; lg "$2 $1"; }
all 1 main
TKV_BENCH_TYPES=turbo4,turbo3 app append.txt "1 old 4k" old fused/llama8b
lg "old 1"
all 2 main
cat $R/progress.txt
append_summary
