#!/usr/bin/env bash
# Session 52 run 3 (~150 s): rows16 (queries on the MMAs' 16-row side, K and V as B fragments)
# forced at m 1 against the plan's one-row form, turbo2 / turbo3, and rows16's turbo2 loop. The
# question: how far rows16 is at 4 rows before a table of field pairs (one 64-bit read a B
# fragment, no copies) would cut its reads by half. Main's binaries (pack of 69e36bd).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
(export TKV_ROWS16=1; loops r16 main profile --types turbo2 --ctx 32k --modes 0 --repeat 2)
lg loops
for rep in 1 2; do
  rows r16.txt "$rep main" main profile --types turbo2,turbo3 --ctx 8k,32k,128k --modes 0 --repeat 20
  (export TKV_ROWS16=1; rows r16.txt "$rep r16" main profile --types turbo2,turbo3 --ctx 8k,32k,128k --modes 0 --repeat 20)
  lg "round $rep"
done
report r16.txt
