#!/usr/bin/env bash
# Prepared in session 50, not run: k8 (patches/k8-not-run.patch; branch: git checkout -b exp-k8
# main && git apply bench/results/2026-12-03-session50/patches/k8-not-run.patch && git commit -qam k8).
# The one-row loop's turbo3 / turbo4 scores (not turbo2 nor f16 / q8_0, whose K is exact) as
# 16x8x8 MMAs, twice as many, each A operand one table read (hi pair in row g, lo pair in row
# g + 8, at k 2c..2c+1): session 50 run 2's listing has every 16x8x16 A operand filled by four
# copies into one register quad (R56-R59) from two LDS.64 results; a two-register operand is
# exactly one LDS.64's destination. First question: does the driver list 16x8x8 f16*f16+f32 at all
# (targets' devices.json now carries cooperative_matrix_shapes; turboprof devices --json prints
# it). The 16x8 A's element order is assumed to be the 16x8 f16 type's, (g, 2c), (g, 2c+1),
# (g+8, 2c), (g+8, 2c+1), which coopmat_probe checks for NV matrices (their types carry no use);
# test_decode_tc decides.
# Prediction: scores' copies 64 -> ~0 a tile, HMMA +16: steady path 535 -> ~490 a tile (turbo3),
# 128K turbo3 / turbo4 -4..-8%; if the driver copies each pair anyway (into one register pair),
# +16 instructions, +1..3%.
# Under KHR matrices (the default on NVIDIA, kvcache/vk/coopmat_khr.hpp) a matrix type's use comes
# from its shape: f16 16x8 is B, and k8's 8x8 has none (coopmat_khr.cpp throws "a matrix type
# whose use its shape does not tell"), so every tc pipeline of the k8 build fails there. This run takes both builds through NV matrices (TKV_COOPMAT_KHR=0), whose driver
# transposes each B operand before use (MOVM; k8's Qb halves: 16 a tile instead of 8), and main's
# KHR figures beside them for scale. If k8 gains under NV, the converter needs the use of each
# matrix value, not of its type (16x8 f16 would be A in k8's scores and B elsewhere).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh k8=exp-k8:turboprof,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
"$P" devices --json > $R/devices.json 2>&1
export TKV_COOPMAT_KHR=0
loops mainnv main profile --types turbo3 --ctx 32k --modes 0 --repeat 2
loops k8 k8 profile --types turbo3 --ctx 32k --modes 0 --repeat 2
lg loops
tst tc-k8 200 build-slim/tests/test_decode_tc-k8
passed tc-k8 && AB_FILE=m1.txt rounds 2 "main k8" profile --types turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
unset TKV_COOPMAT_KHR
AB_FILE=khr.txt rounds 1 main profile --types turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
report m1.txt khr.txt
