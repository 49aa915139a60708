#!/usr/bin/env bash
# Prepared in session 45, not run: main's test_decode on the GPU after 4bbf6cd (fold; session 45
# ran test_decode_tc and test_append_decode with it, not test_decode), then the whole P1-P8 table.
# carry [".gl", ".pk"]; pack at main: bash bench/pack_gpu.sh.
# Expected against run 2's table (6d54c89): q8_0 128K 95.7 -> ~93 us (P1 q8_0 1.42x -> ~1.38x),
# 32K 34.2 -> ~33.4 (P3a ~1.21x, P3b ~1.16x: their reference got faster), P8 q8_0 1.63x ->
# ~1.55x; the other types' rows within ~3%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst decode 110 build-slim/tests/test_decode
targets 420
cat $R/progress.txt $R/device.txt
