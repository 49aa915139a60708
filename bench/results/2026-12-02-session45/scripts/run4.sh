#!/usr/bin/env bash
# Session 45, run 4: q8_0's machine code after 6d54c89, to see what its 746 steady-path
# instructions still do besides the conversions (~130): the pipelines of a 128K call and of
# batch 16 at 8K, as one archive (sass-q8.tar.gz), and the tile loop's steady path listed with
# pipe classes and stall counts (q8-list.txt). carry [".gl", ".pk"]; pack at main 6d54c89.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
sass q8 main profile --types q8_0 --ctx 128k --modes 0 --repeat 2
for f in /tmp/sass-out-q8/*.sass; do
  grep -q HMMA "$f" || continue
  { echo "== $(basename "$f")"; python3 bench/sass_loop.py --list "$f"; } >> "$R/q8-list.txt" 2>&1
done
lg sass
cat $R/progress.txt $R/device.txt $R/sass-q8.txt
grep -c . $R/q8-list.txt
