#!/usr/bin/env bash
# Session 47, run 3: vahead16 (branch exp-vahead, its second commit): run 2's q8_0 V one tile
# ahead (kept for the one-row loop: 128K 88.7 -> 86.9 us, 32K 32.7 -> 31.6, batch 16 8K 76.3 ->
# 74.9; R161 -> R165), and the same in the 16-row loop (m = 3, m = 8: P6's q8_0 cases).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh vahead16=exp-vahead:turboprof,test_decode_tc,test_append_decode
# Prediction: m = 1 as run 2's vahead. The 16-row loop holds more live registers (two
# accumulators a dim block): if the 20 more fit without spills, m = 3 / m = 8 at 32K -2..-4%
# (48.1 / 72.7 us in the table); with spills, slower. m = 2 (the wide 8-column form) unchanged.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main vahead16; do loops $l $l profile --types q8_0 --ctx 32k --m 3 --modes 0 --repeat 2; done
lg loops
suites 200 vahead16
rounds 2 "main vahead16" profile --types q8_0 --ctx 32k,128k --modes 0 --repeat 20
for m in 2 3 8; do AB_FILE=m$m.txt rounds 2 "main vahead16" profile --types q8_0 --ctx 32k --m $m --modes 0 --repeat 20; done
report m2.txt m3.txt m8.txt
