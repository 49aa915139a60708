#!/usr/bin/env bash
# Session 45, run 3: P7's spread at main after 6d54c89. Run 2's table read turbo3 5.54% (session
# 44: 3.49%) with no change on turbo3's path; q8_0 6.87%. Three rounds of bench_append's fused
# llama8b rows, every type (the measure run_targets.sh takes once). carry [".gl", ".pk"]; pack
# at main: bash bench/pack_gpu.sh. Expected: turbo3 within 3-6% from round to round, q8_0 6-7%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
apps 3 f16,q8_0,turbo2,turbo3,turbo4 main
cat $R/progress.txt $R/device.txt
append_summary
