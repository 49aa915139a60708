#!/usr/bin/env bash
# Session 40, run 3. carry [".gl", ".pk"]; pack (at main, d1893af): bash bench/pack_gpu.sh
# The whole P1-P8 table on main as it stands (session 39's turbo4 table of 256 entries in; the
# last table was session 36's), within 450 s.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 450
cat $R/progress.txt $R/device.txt
