#!/usr/bin/env bash
# Session 26, GPU call 2 (run1's pack). Why: run1 found (a) main's (weak-partials) turbo3 tile
# phase 13-26% slower although the loop does not touch the partials (q8_0, f16 even), and (b) the
# fused tail's turbo stores (atomics) costing ~2 us of its attend phase (nost). The machine code of
# the plain tc turbo3 pipeline (base, main) and of the fused one (base), kept whole this time.
source bench/gpu_prelude.sh
for l in base main; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_CACHE_DIR=/tmp/s2-$l timeout 60 $b timeline --types turbo3 --ctx 32k --m 1 --repeat 2 > /dev/null 2>&1
  python3 bench/sass_dump.py $R/sass-$l /tmp/s2-$l > $R/sass-index-$l.txt 2>&1
done
TKV_CACHE_DIR=/tmp/s2-fused timeout 60 $P-base timeline --fused --types turbo3 --ctx 4k --m 1 --repeat 2 > /dev/null 2>&1
python3 bench/sass_dump.py $R/sass-fused /tmp/s2-fused > $R/sass-index-fused.txt 2>&1
rm -f $R/sass-*/*.bin
lg done; cat $R/progress.txt; cat $R/sass-index-*.txt
