#!/usr/bin/env bash
# Session 31, GPU call 2: the P1-P8 table of main at 610a689 (p7-store-pair-pages merged; its tc
# tests passed in run1). carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh` on main (no labels).
# Expected: as session 28's table (b069712, H100) but P7's worst row turbo2 ~8% (run1), the plain
# 8K / 32K rows ~1-2% faster; this machine is an H200, so every row also moves with the device.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
targets 540
cat $R/progress.txt $R/device.txt
