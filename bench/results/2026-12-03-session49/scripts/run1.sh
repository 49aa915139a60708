#!/usr/bin/env bash
# Session 49, run 1: comb (branch exp-combined, session 48's patches/combined-not-tested.patch):
# session 48's unroll2 (two tile buffers, two steps an iteration) only where a step loads the next
# tile while computing this one (PREFETCH: the turbo types; K_AHEAD: q8_0's wide form, whose K and
# V both go one tile ahead), so that q8_0's one-row loop keeps one buffer (unroll2 cost it +30%).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh comb=exp-combined:turboprof,test_decode_tc,test_append_decode
# Prediction: turbo 128K -1.5..-2.6% (as unroll2), q8_0 m 2 32K -7% (as kahead), q8_0 one-row
# unchanged (R165, 660 on the steady path, as main).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main comb; do
  loops $l $l profile --types q8_0,turbo3 --ctx 128k --modes 0 --repeat 2
done
loops comb-m2 comb profile --types q8_0 --ctx 32k --m 2 --modes 0 --repeat 2
lg loops
suites 240 comb
rounds 2 "main comb" profile --types q8_0,turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
AB_FILE=m2.txt rounds 2 "main comb" profile --types q8_0 --ctx 8k,32k --m 2 --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main comb" profile --types q8_0,turbo3 --ctx 8k --batch 16 --modes 0 --repeat 20
report m2.txt b16.txt
