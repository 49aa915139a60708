#!/usr/bin/env bash
# Session 42, run 5: colsup (branch exp-colsup) against main. Run 4 showed P7's q8_0 cost by the
# new token's place: 0.1-2% where the split holding it has at most 4 tiles (one a subgroup),
# 7.6-13% where subgroup 0 or 1 (the quantizers) also take a second tile (5+ tiles). colsup gives
# the quantizers the last tile columns in that split, so 5-6 tiles go to subgroups 2 and 3 first.
# Prediction: C4161 (5 tiles) q8_0 ~9% -> ~1-2%; C4096 (8 tiles) unchanged (~12%); the 128-step
# average q8_0 ~6.3% -> ~3.5-4%, turbo2 ~4% -> ~3%.
# Device time was short: the A/B first, the test after it (its result decides what the rows mean).
# pack: bash bench/pack_gpu.sh colsup=exp-colsup:bench_append,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for c in 4161 4096; do
  for l in main colsup; do
    TKV_BENCH_TYPES=q8_0,turbo2 TKV_BENCH_APPEND_CTX=$c TKV_BENCH_REPEAT=1 app append.txt "1 C$c $l" $l fused/llama8b
  done
done
lg steps
apps 1 q8_0,turbo2 main colsup
tst app-colsup 150 build-slim/tests/test_append_decode-colsup
cat $R/progress.txt
sed 's/iterations:3\/manual_time //' $R/append.txt | cut -c1-200
