#!/usr/bin/env bash
# Session 49, run 2b: run 2 again without its listings (run 2 spent its 600 s in
# bench/sass_loop.py on u16's 16-row listing, R245, which did not finish; its other steps never ran).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
suites 200 u16 &
sleep 1
wait
AB_FILE=m8.txt rounds 2 "main u16" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k --m 8 --modes 0 --repeat 20
AB_FILE=m3.txt rounds 1 "main u16" profile --types turbo3 --ctx 8k,32k --m 3 --modes 0 --repeat 20
report m8.txt m3.txt
