#!/usr/bin/env bash
# Session 43, run 2: freshcut (the fused tc split holding the new tokens keeps at most one tile a
# subgroup; the split before it takes the rest) against main. carry [".gl", ".pk"]; pack at main:
#   git checkout -q -b exp-freshcut && git apply bench/results/2026-11-29-session43/patches/freshcut.patch \
#     && git commit -qam "exp freshcut" && git checkout -q main
#   bash bench/pack_gpu.sh freshcut=exp-freshcut:bench_append,turboprof,test_append_decode
# Prediction: the fresh split ends ~0.5 us earlier where it held 5-8 tiles (its 3.6 us prologue
# then one tile round, not two); the split before it runs three rounds from 1.3 us. C 4096 q8_0
# ~12% -> 6-9%, C 4161 ~9% -> 5-8%, C 4160 even; 128 steps q8_0 ~6.3% -> 4.5-5.5%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tested test_append_decode 300 freshcut
labels=$LABELS
tls q8_0,turbo3 4095 $labels
tls q8_0,turbo3 4160 $labels
for c in 4096 4161 4224 4160; do
  for l in $labels; do
    TKV_BENCH_TYPES=q8_0,turbo3 TKV_BENCH_APPEND_CTX=$c TKV_BENCH_REPEAT=1 app append.txt "1 C$c $l" $l fused/llama8b
  done
done
lg steps
apps 3 f16,q8_0,turbo2,turbo3,turbo4 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
sed 's/iterations:3\/manual_time //' $R/append.txt | cut -c1-200
