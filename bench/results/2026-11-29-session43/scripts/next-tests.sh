#!/usr/bin/env bash
# Prepared in session 43, not run (no device time left): main's GPU suites after aabc330 (a
# batch's sequence info in the push constants), whose run 5 ran test_decode_tc whole but only
# parts of test_decode and test_append_decode on the GPU. carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh. One call (~5 minutes); then next-targets.sh.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst decode 280 build-slim/tests/test_decode &
tst append 280 build-slim/tests/test_append_decode &
wait
cat $R/progress.txt
