#!/usr/bin/env bash
# Session 47, run 2: vahead (branch exp-vahead): q8_0 V one tile ahead in the one-row (8-column)
# loop, loaded at the top of the step before, while K keeps its place (next tile's K after the
# scores, in K's registers). Session 46's lesson: q8_0 at 128K runs 1.34x its read floor while
# its loop's issue estimate (~62 us) sits under the floor (66 us), so the distance is the
# overlap of loads and loop. Today V(t) is in flight only during tile t's scores.
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh vahead=exp-vahead:turboprof,test_decode_tc,test_append_decode
# Prediction: registers R161 -> ~178 (16 words, a norm and the scales more). If the SM still
# holds as many warps, 128K 88.6 -> ~78-82 us, 32K 32.5 -> ~30, batch 16 8K 76.5 -> ~70; 4K
# within 0.5 us. If the registers cost a workgroup an SM (12 -> 8 warps), slower everywhere
# (session 37: 2 -> 3 workgroups an SM was worth 5-7% at 128K).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main vahead; do loops $l $l profile --types q8_0 --ctx 128k --modes 0 --repeat 2; done
lg loops
suites 200 vahead
rounds 2 "main vahead" profile --types q8_0 --ctx 4k,16k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main vahead" profile --types q8_0 --ctx 8k --batch 16 --modes 0 --repeat 20
report b16.txt
