#!/usr/bin/env bash
# Session 27, GPU call 5 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh t2=477f1bc:turboprof
# t4=fe438c9:turboprof t1=522ae60:turboprof` on main at 1304d7d+). Branch touch-l2: the tc loop
# (turbo pairs, the columns' form) loads one word a 128-byte line of the tile TOUCH steps ahead
# (lanes 0-6 K's lines, 8-14 V's), consumed at the end of the iteration, so that later tiles' loads
# find their lines in L2 (P2: mode 0 within 10% of mode 1; 1.10-1.12x in run4, "the rest is memory
# stalls", session 11). t1 touches the tile the registers prefetch anyway (the touches' own cost).
# Expected: t2 / t4 mode 0 at 32K 28.2 -> ~26.5-27 (P2 ~1.05-1.07x), 128K 72 -> ~69, mode 1 even;
# t1 mode 0 +0-1%.
source bench/gpu_prelude.sh
for round in 1 2; do
  for l in main t1 t2 t4; do
    rows ab.txt "$round $l" $l profile --types turbo3,turbo4 --ctx 8k,32k,128k --modes 0,1 --repeat 20
  done
  lg "ab r$round"
done
for l in t2 t4; do
  b=$P-$l
  TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b profile --types turbo3,turbo4 --ctx 32k --modes 0 --repeat 1 2>&1 | grep -iE 'regist|spill|stack' | sed "s/^/$l /" | head -12 >> $R/stats.txt
done
TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-main timeout 60 $P profile --types turbo3,turbo4 --ctx 32k --modes 0 --repeat 1 2>&1 | grep -iE 'regist|spill|stack' | sed "s/^/main /" | head -12 >> $R/stats.txt
cat $R/progress.txt
grep -v ' type ' $R/ab.txt | awk '{print $1, $2, $3, $5, $6, $7}' | sort -k3,3 -k5,5 -k4,4 -k2,2 -k1,1
cat $R/stats.txt
