#!/usr/bin/env bash
# Session 52 run 4 (~200 s): the plan's splits and subgroups at P5's depths (1K-4K, m 1), every
# type, against forced neighbours: TKV_SPLITS 16 / 64, TKV_SUBGROUPS 6 / 8. The question: does any
# fixed choice beat the plan's by more than the rounds' spread (~0.3 us) where P5a's worst cases
# (f16 4K 15.1 us, turbo4 / turbo3 4K) are? Main's binaries (pack of 69e36bd; vdepth changes q8_0
# only).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
A="profile --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 1k,2k,4k --modes 0 --repeat 20"
for rep in 1 2; do
  rows p5.txt "$rep plan" main $A
  (export TKV_SPLITS=16; rows p5.txt "$rep s16" main $A)
  (export TKV_SPLITS=64; rows p5.txt "$rep s64" main $A)
  (export TKV_SUBGROUPS=6; rows p5.txt "$rep g6" main $A)
  (export TKV_SUBGROUPS=8; rows p5.txt "$rep g8" main $A)
  lg "round $rep"
done
report p5.txt
