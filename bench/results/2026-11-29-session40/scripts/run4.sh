#!/usr/bin/env bash
# Session 40, run 4. carry [".gl", ".pk"]; pack (at main after the bench_append change):
# bash bench/pack_gpu.sh base=d1893af:bench_append
# Run 3's table read P7 turbo4 at 11.8% (fused step 440 us against a decode step of 393.7). The
# decode step attended 4096 tokens (turbo4's 256-entry plan: 16 splits of 8 subgroups) and the
# fused one 4097 (the 64-entry plan: 33 splits of 4). bench_append's appending ways now attend
# the same 4096 tokens (cache of 4095, the 4096th appended). Prediction: turbo4 ~1-3% (the
# fused call with the 256-entry plan; session 36: 2.8%); the other types as before (2-4%).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in base main; do TKV_BENCH_TYPES=f16,q8_0,turbo2,turbo3,turbo4 app append.txt "1 $l 4k" "$l" fused/llama8b; lg "$l"; done
[ $((SECONDS-T0)) -lt 200 ] && { TKV_BENCH_TYPES=turbo4,turbo3 app append.txt "2 main 4k" main fused/llama8b; lg "main again"; }
cat $R/progress.txt $R/device.txt
append_summary
