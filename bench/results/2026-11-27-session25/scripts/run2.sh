#!/usr/bin/env bash
# Session 25, GPU call 2 (run1's pack: the tree is branch merge-weights at f2c1cbb, "base" main
# 4a2d3b9). Why: run1 measured the branch's merge slower everywhere (m 1 4K 1.7 -> 2.6 us, m 3
# q8_0 4.8 -> 7.2), against a prediction of about half. The machine code of both merges (plain
# turbo3 m 1 at 4K) from the pipeline cache, to see where the loads of o went (sunk past the
# barrier? spilled?).
source bench/gpu_prelude.sh
(command -v nvdisasm; command -v zstd) > $R/tools.txt 2>&1
for l in main base; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_CACHE_DIR=/tmp/sass-$l timeout 60 $b timeline --types turbo3 --ctx 4k --m 1 --repeat 2 > /dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sass-out-$l /tmp/sass-$l > $R/sass-index-$l.txt 2>&1
done
lg "dumped"
mkdir -p /tmp/pk && for l in main base; do cp -r /tmp/sass-out-$l /tmp/pk/; done
tar czf $R/sass.tar.gz -C /tmp/pk .
cat $R/progress.txt $R/tools.txt; head -20 $R/sass-index-*.txt
