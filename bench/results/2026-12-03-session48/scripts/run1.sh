#!/usr/bin/env bash
# Session 48, run 1: unroll2 (branch exp-unroll2, patches/unroll2.patch): the tile loop of the
# 8-column form keeps each tile's words in two buffers and runs two steps an iteration, the
# current tile's words in buffer u and the next one's loaded into the other, so that no copy
# carries the next tile's words into the current ones at the end of a step (PREFETCH: the turbo
# types' K and V; V_AHEAD: q8_0's V). main here has V_AHEAD in q8_0's wide form (970f666), whose
# append suite session 47's run 4 did not finish: it runs first, with unroll2's suites.
# kahead (branch exp-kahead-wide, on unroll2): the wide form's K one tile ahead too, loaded at the
# top of the step before into the other buffer (R220 is past the 12-warp line already).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh unroll2=exp-unroll2:turboprof,test_decode_tc,test_append_decode kahead=exp-kahead-wide:turboprof,test_decode_tc,test_append_decode
# Prediction: if the driver unrolls and keeps the buffers in registers, q8_0's one-row steady
# path 660 -> ~640 (its 21 copies), 128K 86.9 -> ~85.5 us; the wide form's 43 MOV -> ~22, m 2 at
# 32K 36.9 -> ~36; the turbo loops lose their prefetched words' copies (~14 a tile for turbo3),
# -1..-2%. If it does not unroll, the buffers go to local memory (STL/LDL in the loop): slower.
# kahead: registers R220 -> ~237 (still 8 warps an SM), m 2 at 32K -2..-4% beyond unroll2.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main unroll2; do
  loops $l $l profile --types q8_0,turbo3 --ctx 128k --modes 0 --repeat 2
  loops $l-m2 $l profile --types q8_0 --ctx 32k --m 2 --modes 0 --repeat 2
done
loops kahead-m2 kahead profile --types q8_0 --ctx 32k --m 2 --modes 0 --repeat 2
lg loops
tst app 360 build-slim/tests/test_append_decode &
suites 360 unroll2 &
suites 360 kahead &
wait
rounds 2 "main unroll2" profile --types q8_0,turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
AB_FILE=m2.txt rounds 2 "main unroll2 kahead" profile --types q8_0 --ctx 8k,32k --m 2 --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main unroll2" profile --types q8_0,turbo3 --ctx 8k --batch 16 --modes 0 --repeat 20
report m2.txt b16.txt
