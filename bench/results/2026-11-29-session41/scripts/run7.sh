#!/usr/bin/env bash
# Session 41, run 7. carry [".gl", ".pk"]; pack (at main, 780b910): bash bench/pack_gpu.sh
# The whole P1-P8 table with P7's new measure (every way's step i at 4096 + i tokens, 128 steps)
# and the fused pair form's tables by every subgroup, within 420 s.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 420
cat $R/progress.txt $R/device.txt
