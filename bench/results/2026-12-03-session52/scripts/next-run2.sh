#!/usr/bin/env bash
# Prepared in session 52, not run (~520 s; run 4 took ~25 s a setting and round): run 4's
# forced-settings sweep at the other targets' shapes, main's binaries (next-run1.sh's pack). Run 4
# found 4-9% at P5's depths that the plan left; the same question for P1/P2 (m 1 8K, 16K: 32
# four-subgroup splits of 4-8 steps, two an SM), P6 (next-run3.sh) and P8 (batch 16 8K: 3 splits,
# 384 workgroups). Forced: TKV_SUBGROUPS 6 / 8, TKV_SPLITS halved / doubled. Then a tune dry run.
# Prediction: none known better; a forced setting that beats the plan by more than the rounds'
# spread (~0.3 us at 8K, ~1% at 32K) in both rounds names a plan rule to revisit.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
T=f16,q8_0,turbo2,turbo3,turbo4
for rep in 1 2; do
  forced m1.txt $rep "profile --types $T --ctx 8k,16k --modes 0 --repeat 20" \
    "TKV_SUBGROUPS=6 g6" "TKV_SUBGROUPS=8 g8" "TKV_SPLITS=16 s16" "TKV_SPLITS=64 s64"
  lg "m1 $rep"
  forced b16.txt $rep "profile --types $T --ctx 8k --batch 16 --modes 0 --repeat 20" \
    "TKV_SUBGROUPS=6 g6" "TKV_SUBGROUPS=8 g8" "TKV_SPLITS=2 s2" "TKV_SPLITS=6 s6"
  lg "b16 $rep"
done
# turboprof tune --subgroups (e474211) on the device it was written for, as a dry run: does it
# find run 4's eight subgroups at 4K (and what else)?
timeout 150 $P tune --types turbo2,turbo3,turbo4 --ctx 4k,8k,32k --variants tc --subgroups 4,6,8 --repeat 20 \
  --dry-run > $R/tune.txt 2>&1; lg "tune rc $?"
report m1.txt b16.txt; tail -12 $R/tune.txt
