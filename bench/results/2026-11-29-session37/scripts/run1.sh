#!/usr/bin/env bash
# Session 37, run 1. carry [".gl", ".pk"] (session 36's last pack: kernels of a08fa15).
# The tile loops' machine code, whole (session 36 kept only sass_loop.py's static counts, which
# include both sides of every branch in the loop): one archive per type, mode 0 at 128K, for a
# per-path count here.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for t in turbo2 turbo3 turbo4 q8_0 f16; do
  sass "$t" main profile --types $t --ctx 128k --modes 0 --repeat 2
  rm -f $R/sass-$t.txt
done
lg sass
ls -la $R
