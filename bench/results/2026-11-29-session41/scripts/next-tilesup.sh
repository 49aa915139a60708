#!/usr/bin/env bash
# Prepared in session 41, not run (no device time left). carry [".gl", ".pk"]; pack at main with
# the experiment as a label:
#   git checkout -b exp-tilesup && git apply bench/results/2026-11-29-session41/patches/tilesup-not-run.patch \
#     && git commit -qam "exp tilesup" && git checkout main
#   bash bench/pack_gpu.sh tilesup=exp-tilesup:bench_append,turboprof,test_append_decode
# Session 41 run 5: in a fused call the splits that hold no new token run their tiles slower than
# the plain call's splits, turbo3 3.01 against 2.70 us (turbo2 2.46 / 2.34; q8_0 and turbo4
# equal), though the loops' machine code matches (run 1, turbo4; turbo3's 570 / 569 steady
# path). The call ends with its last split, so for turbo3 that is ~0.3 us of a ~13.5 us call at
# every place of the new token. One difference left is the order: a fused call takes every
# split's tiles from each subgroup's last down (TILES_DOWN), so that new tokens are only ever a
# first fetch; only the split that holds them needs that. tilesup sets the order per split: down
# where the split holds new tokens, up elsewhere. It compiles; it has had no test of the tc
# kernel (lavapipe has no cooperative matrices, so only the GPU runs decode_tc: the script's
# test_append_decode-tilesup is that test).
# Prediction: most likely no change. The memory pattern is symmetric (a 128-token split spans
# two 64-token pages, and either order takes each subgroup's first fetch from one of them), so a
# gain would be a surprise. If the order is the cause: turbo3's fused tiles (timeline medians)
# 3.01 -> ~2.7 us; P7 turbo3 ~3.9% -> ~2%, turbo2 ~3-4% -> ~2-3%; q8_0 unchanged (its tiles were
# already equal). If not, the suspects left are the fused pipeline's code placement (its loop
# starts at 0x95c0, after the quantizer, against 0x22e0; run 1) or registers (turbo3: R149
# fused, R157 plain).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-tilesup 240 build-slim/tests/test_append_decode-tilesup &
for l in main tilesup; do
  tl tl.txt "$l fused 4095" $l --fused --types turbo3,turbo2,q8_0 --ctx 4095 --repeat 20
  tl tl.txt "$l fused 4159" $l --fused --types turbo3,turbo2,q8_0 --ctx 4159 --repeat 20
done
lg tl
apps 2 turbo3,turbo2 main tilesup
apps 2 q8_0 main tilesup
wait
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
