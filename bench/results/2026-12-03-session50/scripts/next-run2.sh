#!/usr/bin/env bash
# Prepared in session 50, not run: k8 (patches/k8-not-run.patch; branch: git checkout -b exp-k8
# main && git apply bench/results/2026-12-03-session50/patches/k8-not-run.patch && git commit -qam k8).
# The one-row loop's turbo3 / turbo4 scores (not turbo2 nor f16 / q8_0, whose K is exact) as
# 16x8x8 MMAs, twice as many, each A operand one table read (hi pair in row g, lo pair in row
# g + 8, at k 2c..2c+1): session 50 run 2's listing has every 16x8x16 A operand filled by four
# copies into one register quad (R56-R59) from two LDS.64 results; a two-register operand is
# exactly one LDS.64's destination. First question: does the driver list 16x8x8 f16*f16+f32 at all
# (targets' devices.json now carries cooperative_matrix_shapes; turboprof devices --json prints
# it) and is the 16x8 A element order (g, 2c), (g, 2c+1), (g+8, 2c), (g+8, 2c+1), as the 16x8
# B / accumulator's is: test_decode_tc decides (no coopmat_probe check for it yet).
# Prediction: scores' copies 64 -> ~0 a tile, HMMA +16: steady path 535 -> ~490 a tile (turbo3),
# 128K turbo3 / turbo4 -4..-8%; if the driver copies each pair anyway (into one register pair),
# +16 instructions, +1..3%.
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh k8=exp-k8:turboprof,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
"$P" devices --json > $R/devices.json 2>&1 || "$P" devices > $R/devices.json 2>&1
for l in main k8; do loops $l $l profile --types turbo3 --ctx 32k --modes 0 --repeat 2; done
lg loops
tst tc-k8 200 build-slim/tests/test_decode_tc-k8
passed tc-k8 && AB_FILE=m1.txt rounds 2 "main k8" profile --types turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
passed tc-k8 && tst app-k8 250 build-slim/tests/test_append_decode-k8
report m1.txt
