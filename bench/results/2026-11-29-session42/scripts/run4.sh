#!/usr/bin/env bash
# Session 42, run 4: P7's fused-step cost of q8_0 and turbo2 (main) by the new token's place, one
# step of 32 layers a measurement (TKV_BENCH_REPEAT=1): cache of C - 1 + the new token at C - 1.
#   C 4096: place 4095, the last of a full 128-token split (no new page)
#   C 4097: place 4096, starts a page and a split
#   C 4098: place 4097, neither
#   C 4160: place 4159, the middle of a split (no new page)
#   C 4161: place 4160, starts a page in the middle of a split
# Question: how much of the 128-step average (q8_0 ~6.3%) comes from the steps whose token starts
# a page (2 of 128: page-table update and a barrier inside the step) and how much from the full
# split. Prediction: the page-start steps +10-20% (the timeline's 1.45x was L2-hot), the full
# split ~+6-8%, the others ~+2-4%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for c in 4096 4097 4098 4160 4161; do
    TKV_BENCH_TYPES=q8_0,turbo2 TKV_BENCH_APPEND_CTX=$c TKV_BENCH_REPEAT=1 app append.txt "$rep C$c" main fused/llama8b
  done
done
lg bench
cat $R/progress.txt
sed 's/iterations:3\/manual_time //' $R/append.txt
