#!/usr/bin/env bash
# Session 21, branch tc-rows16 (carry [".gl", ".pk"] packed by session 20's pack-rows16.sh): where
# rows16's time goes at llama8b 32K m 3 and m 8 against the columns (wide) form. rows16 lost there
# (51.2 -> 58.8 us at m 3) with fewer loop instructions per 12 rows (1007 against 2 x 752): the
# question is whether its per-workgroup fixed part (twice the splits a group: prologue, partials,
# the last workgroup's merge of 33 splits x 12 rows) or its tiles take the time.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
P=build-slim/profile/turboprof
for m in 3 8; do
  for r in 0 1; do
    TKV_ROWS16=$r TKV_LOG=info timeout 90 $P timeline --types turbo3,q8_0 --ctx 32k --m $m --repeat 5 > $R/timeline-m$m-r$r.txt 2>&1
    lg "timeline m$m rows16=$r rc $?"
  done
done
# rows16 at the columns' split count (half its plan's): the fixed part halves, the tiles per split double
for s in 8 12 16 24 33; do
  TKV_ROWS16=1 TKV_SPLITS=$s TKV_LOG=info timeout 60 $P profile --types turbo3 --ctx 32k --m 3 --modes 0 --repeat 10 2>&1 |
    grep -E '^turbo|plan|rror' | sed "s/^/s$s /" >> $R/splits.txt
  lg "splits $s rc $?"
done
for s in 8 16 33; do
  TKV_ROWS16=0 TKV_SPLITS=$s timeout 60 $P profile --types turbo3 --ctx 32k --m 3 --modes 0 --repeat 10 2>&1 |
    grep -E '^turbo|rror' | sed "s/^/cols-s$s /" >> $R/splits.txt
  lg "cols splits $s rc $?"
done
cat $R/progress.txt; grep -E "^turbo|^q8_0|^type" $R/timeline-*.txt; cat $R/splits.txt
