#!/usr/bin/env bash
# Session 45, run 2: main's test_decode on the GPU, then the whole P1-P8 table, at main after
# 6d54c89 (q8_0's one-mask-one-xor operands). carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh. Expected against session 44's table: q8_0 128K 108.0 -> ~95 us
# (P1's q8_0 row ~1.42x), 16K 24.8 -> ~23.5 (P3c ~2.5x), 32K 37.4 -> ~34.3 (P3a ~1.23x, P3b
# ~1.21x), P8's q8_0 case 1.85x -> ~1.62x; the other types' rows within ~2%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst decode 110 build-slim/tests/test_decode
targets 420
cat $R/progress.txt $R/device.txt
