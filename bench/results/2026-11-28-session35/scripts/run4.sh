#!/usr/bin/env bash
# Session 35, run 4. carry [".gl", ".pk"]; packed on qr-regs (the tree: qrw):
#   bash bench/pack_gpu.sh base=5d3d556:bench_append qs=6b9c773:bench_append
# qs (diag-qs): qrw's quantizer core (group scalars once, norm beside the rotation) with main's
# fw_write through shared memory. Runs 2-3: turbo3's fused step +7 us with qrr and qrw while its
# instrumented timelines do not move. Question: is it the register fw_write (qs like base) or the
# quantizer core (qs like qrw)?
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
apps 3 turbo3,turbo2 base qs main
cat "$R/progress.txt" "$R/device.txt"
append_summary
