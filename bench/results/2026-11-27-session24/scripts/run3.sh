#!/usr/bin/env bash
# Session 24, GPU call 3 (carry [".gl", ".pk"] from scripts/pack3.sh: main plus branch
# fused-third-slot's turboprof and bench_append). Why: call 2's P7 stayed at 6-8.5% though a fused
# m 1 4K call (timeline, 4096 old tokens) costs only ~0.3 us over the plain one since
# merge-batch17. bench_append's fused steps append as they go, so all but the first run at 4097+
# old tokens, where the fused plan takes 22 three-step splits (264 slots less 8 tails < 33 x 8);
# the decode step it is compared with runs at 4096 (32 two-step splits). The branch gives the
# tails an SM's third workgroup slot instead. Expected: fused m 1 at 4100 old tokens ~ -1 us a
# call (one step of tiles less); P7 6-8.5% -> ~2-3%; but a second wave where registers hold two
# workgroups an SM (turbo4 had 177 registers in session 6): `late` > 0 in the timeline.
source bench/gpu_prelude.sh
TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats timeout 60 $P-third timeline --fused --types turbo4,turbo3,q8_0,f16 --ctx 4100 --m 1 --repeat 3 > $R/stats.txt 2>&1
lg "stats rc $?"
for round in 1 2; do
  for l in main third; do
    rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,turbo4,q8_0,f16,turbo2 --ctx 4096,4100,4160 --m 1 --repeat 5
  done
  lg "timelines r$round"
done
for round in 1 2; do
  for l in main third; do app append.txt "$round $l" $l fused; lg "bench_append $round $l"; done
done
cat $R/progress.txt; grep -iE "regist" $R/stats.txt | head -20
grep -oE "^[0-9] [a-z0-9]+ fused/llama8b/[a-z0-9_]+/f[0-9]+|ratio_pct=[0-9.]+" $R/append.txt | paste - - | sort -k3,3 -k2,2
