#!/usr/bin/env bash
# Session 26, GPU call 2b (run1's pack; run2's outputs held too many files to come back): the
# machine code of the plain tc turbo3 m 1 32K pipeline (base ff90ebc, main weak-partials e9aabdb)
# and of the fused one (base), as one archive. run2/sass-notes.txt was made from it on the CPU.
source bench/gpu_prelude.sh
for l in base main; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_CACHE_DIR=/tmp/s2-$l timeout 60 $b timeline --types turbo3 --ctx 32k --m 1 --repeat 2 > /dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sd-$l /tmp/s2-$l > /dev/null 2>&1
done
TKV_CACHE_DIR=/tmp/s2-fused timeout 60 $P-base timeline --fused --types turbo3 --ctx 4k --m 1 --repeat 2 > /dev/null 2>&1
python3 bench/sass_dump.py /tmp/sd-fused /tmp/s2-fused > /dev/null 2>&1
mkdir -p /tmp/pk; cp /tmp/sd-base/04.sass /tmp/pk/base.sass; cp /tmp/sd-main/00.sass /tmp/pk/main.sass
cp /tmp/sd-fused/04.sass /tmp/pk/fused.sass; tar czf $OUT/sass2.tar.gz -C /tmp/pk .
