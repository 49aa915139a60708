#!/usr/bin/env bash
# Session 44, run 3: q8i8 (branch exp-q8i8): q8_0's operand conversion, q8_pair in
# shaders/decode_tc.comp, gathers its two bytes as u8vec4 elements (one byte permute) and sets
# the exponent and flips the sign bits in one xor. carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh q8i8=exp-q8i8:turboprof,test_decode_tc,test_append_decode
# main's q8_0 tile loop (session 37, run 1): steady path 896 instructions, LOP3 173, SHF 88,
# PRMT 48, IMAD 71, VIADD 64 for 64 conversions (~4.5 ALU/IMAD each: shift, and, and,
# multiply-add, add). Prediction: ~2 each (PRMT + LOP3), ~160 half-rate instructions fewer a
# tile at ~1.9 cycles each of ~1,740 measured: q8_0 m 1 at 128K 108 -> ~90 us, 32K 37.4 ->
# ~32, batch 16 8K 94.8 -> ~80; 4K within ~0.5 us. f16 and turbo pipelines do not change.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc-q8i8 150 build-slim/tests/test_decode_tc-q8i8 &
tst app-q8i8 200 build-slim/tests/test_append_decode-q8i8 &
wait
lg tests
rounds 2 "main q8i8" profile --types q8_0 --ctx 4k,16k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 1 "main q8i8" profile --types q8_0 --ctx 8k --batch 16 --modes 0 --repeat 20
for l in main q8i8; do loops "$l" "$l" profile --types q8_0 --ctx 128k --modes 0 --repeat 2; done
lg loops
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
cut -c1-150 $R/b16.txt | grep -v " type "
grep -E "^== |steady path:|issue floor" -A1 $R/loops.txt | cut -c1-250
