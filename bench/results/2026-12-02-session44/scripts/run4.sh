#!/usr/bin/env bash
# Session 44, run 4: q8k (branch exp-q8k): q8_0 K's operand pairs are bytes 0, 2 and 1, 3 of a
# word ((w or w >> 8) & 0x00ff00ff, xor 0x64806480: one and, one xor, a shift for every other
# pair), with the query's dims staged in that order (k_slot); V unchanged. q8kv (exp-q8kv, on
# top of q8k): V's pairs too, byte p of two tokens' words from their joined halves (bytes 0, 1 or
# 2, 3 of both, shared by two pairs), one mask and the xor. carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh q8k=exp-q8k:turboprof q8kv=exp-q8kv:turboprof,test_decode_tc,test_append_decode
# (Prepared, not run: session 44's device budget ran out on refused starts. Where the branches
# are gone: git checkout -b exp-q8k main && git am ../patches/q8k-not-run.patch, then
# git checkout -b exp-q8kv && git am ../patches/q8kv-not-run.patch. Both formulas were checked
# against every signed byte on the CPU; the q8k tree passed CI=true bash .ci/run on lavapipe,
# which does not run the tc kernel.)
# Run 3 (u8vec4) failed: 348 PRMT. Prediction: K's 32 conversions a tile ~5 -> ~1.5 instructions,
# ~110 fewer on the steady path (896), ~200 of ~1,740 cycles a tile: q8_0 at 128K 108.9 -> ~97 us,
# 32K 37.4 -> ~35; 4K within 0.5 us. q8kv: V's 32 conversions ~4.5 -> ~2.5, another ~60:
# 128K ~97 -> ~92 us.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
# (Lean, written when ~5 minutes of device budget were left; with more, run test_decode_tc and
# test_append_decode whole. Here: the tc tests that hold q8_0, in two processes,
# and the append tests over every type and shape, side by side.)
tst tc-q8kv 100 build-slim/tests/test_decode_tc-q8kv --gtest_filter='*RowTypes*:*RowChunks*:*SmallHeadDims*:*AnySplit*:*LargeScores*' &
tst tc16-q8kv 100 build-slim/tests/test_decode_tc-q8kv --gtest_filter='*SixteenRowSide*' &
tst app-q8kv 100 build-slim/tests/test_append_decode-q8kv --gtest_filter='*EveryTypeAndShape*' &
wait
lg tests
rounds 1 "main q8k q8kv" profile --types q8_0 --ctx 4k,16k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 1 "main q8k q8kv" profile --types q8_0 --ctx 8k --batch 16 --modes 0 --repeat 20
for l in q8k q8kv; do loops $l $l profile --types q8_0 --ctx 128k --modes 0 --repeat 2; done
lg loops
report b16.txt
