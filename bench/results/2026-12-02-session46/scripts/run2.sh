#!/usr/bin/env bash
# Session 46, run 2: main's test_decode on the GPU, then the whole P1-P8 table, at main after
# fold (4bbf6cd) and q8magic (run 6). carry [".gl", ".pk"]; pack at main: bash bench/pack_gpu.sh.
# Expected against session 45's table (at 6d54c89): q8_0 128K 95.7 -> ~89 us, 32K 34.2 -> ~32.3,
# so P3a 1.24x -> ~1.17x and P3b 1.19x -> ~1.13x (their reference, our q8_0, is faster); P8's
# q8_0 case 1.63x -> ~1.50x; the other types' rows within ~3%. First the turbo types' tile loops
# listed (turbo-list.txt), to look for more two-constant LOP3 pairs like q8_0's.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
sass tb main profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2
for f in /tmp/sass-out-tb/*.sass; do
  grep -q HMMA "$f" || continue
  { echo "== $(basename "$f")"; python3 bench/sass_loop.py --list "$f"; } >> "$R/turbo-list.txt" 2>&1
done
rm -f $R/sass-tb.tar.gz $R/sass-tb.txt; lg sass
tst decode 110 build-slim/tests/test_decode
targets 420
cat $R/progress.txt $R/device.txt
