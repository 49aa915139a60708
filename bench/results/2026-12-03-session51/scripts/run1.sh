#!/usr/bin/env bash
# (Session 51 run 1: session 50's next-run2.sh as run, exp-k8 rebased on 5db4420.)
# Prepared in session 50, not run (~450 s): k8 (patches/k8-not-run.patch; branch: git checkout -b exp-k8
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
# (Session 12, tuning log §20 run 2: building every A before its MMAs left the SASS identical; k8
# changes the operand's size, not the order.)
# Prediction: scores' copies 64 -> ~0 a tile, HMMA +16: steady path 535 -> ~490 a tile (turbo3),
# 128K turbo3 / turbo4 -4..-8%; if the driver copies each pair anyway (into one register pair),
# +16 instructions, +1..3%.
# Under KHR matrices (the default on NVIDIA, kvcache/vk/coopmat_khr.hpp) a matrix type's use came
# from its shape alone (f16 16x8: B). The branch's rewrite gives f16 16x8 an A twin (use A) for
# the function variables whose loads are MMA A operands, and takes f16 8x8 as B; checked here word
# by word (test_decode_tc's KhrRewrite tests; the rewrite of main's shaders is byte-identical to
# main's converter) but not by a validator (Debian's spirv-val predates the KHR capability). So
# this run times k8 both ways: KHR (the default) and NV matrices (TKV_COOPMAT_KHR=0, whose driver
# transposes each B before use: k8's Qb halves make that 16 a tile instead of 8), each against
# main the same way.
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh k8=exp-k8:turboprof,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
"$P" devices --json > $R/devices.json 2>&1
loops main main profile --types turbo3 --ctx 32k --modes 0 --repeat 2
loops k8 k8 profile --types turbo3 --ctx 32k --modes 0 --repeat 2
lg loops
suites 250 k8  # (KHR matrices: tc-k8, app-k8 side by side, ~240 s)
passed tc-k8 && AB_FILE=khr.txt rounds 2 "main k8" profile --types turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
export TKV_COOPMAT_KHR=0  # (NV matrices: the turbo pairs' exactness test alone, then one round)
tst tc-k8nv 100 build-slim/tests/test_decode_tc-k8 --gtest_filter='TensorCores.EveryTurboPairIsExact:TensorCores.AnySplitCountIsExact'
passed tc-k8nv && AB_FILE=nv.txt rounds 1 "main k8" profile --types turbo3,turbo4 --ctx 32k,128k --modes 0 --repeat 20
unset TKV_COOPMAT_KHR
report khr.txt nv.txt
