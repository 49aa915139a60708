#!/usr/bin/env bash
# Session 45, run 5: fold (branch exp-fold): every tile load as one masked base plus constants
# (in_range), so that the compiler may fold the constants into the loads' immediate offsets.
# Run 4 showed each of q8_0's 32 tile loads with its own IADD3, LEA and IMAD.X (~96 of 746
# steady-path instructions); docs/targets.md counts ~40 address instructions for turbo3's 14.
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh fold=exp-fold:turboprof,test_decode_tc,test_append_decode
# Prediction, if the driver folds: q8_0's steady path 746 -> ~670, 128K 95.7 -> ~87 us; turbo3
# 569 -> ~540, 128K 72 -> ~69; f16 (16-byte loads, memory-bound at depth) unchanged at 128K.
# If it does not fold: the same machine code, no change.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main fold; do loops $l $l profile --types q8_0,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
tst tc-fold 200 build-slim/tests/test_decode_tc-fold &
tst app-fold 200 build-slim/tests/test_append_decode-fold &
wait
lg tests
rounds 2 "main fold" profile --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 4k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 1 "main fold" profile --types q8_0,turbo3 --ctx 8k --batch 16 --modes 0 --repeat 20
report b16.txt
