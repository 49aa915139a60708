#!/usr/bin/env bash
# Session 35, run 5. carry [".gl", ".pk"]; packed on diag-delay (the tree: delay, c6e2ad2):
#   bash bench/pack_gpu.sh qrw=58d2ba9:bench_append
# delay: qrw with ~0.8 us of spinning after the fused quantizer's codes (its old length back).
# Question: is turbo3's fused regression (runs 2-4) the fresh split's timing or the code? If
# timing, delay takes turbo3 back to ~2% (and turbo2 back to ~5%); if code, turbo3 stays ~3.5%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
apps 3 turbo3,turbo2 qrw main
cat "$R/progress.txt" "$R/device.txt"
append_summary
