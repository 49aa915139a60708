#!/usr/bin/env bash
# Session 38, run 7. carry [".gl", ".pk"]; pack: run 6's (main's kernels).
# P6 by the same lens: the tile loops of m 1, 2, 3 and 8 at 32K (8 columns, WIDE, rows16), their
# steady paths, stall sums and class-cost estimates beside their times. Prediction: m 8's loop
# (rows16, 16 rows, two row chunks) costs ~2x m 1's per tile, twice over for the chunks, so the
# m 8 / m 1 ratio of 2.2-2.3x follows from the loops' half-rate work and MMAs.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for m in 1 2 3 8; do
  rows p6.txt "m$m" main profile --types turbo3,q8_0 --ctx 32k --m $m --modes 0 --repeat 20
  loops "m$m" main profile --types turbo3,q8_0 --ctx 32k --m $m --modes 0 --repeat 2
done
lg done
cat $R/progress.txt $R/device.txt $R/p6.txt
grep -E "^== |steady path:|driver's schedule|^pipes" $R/loops.txt | cut -c1-220
