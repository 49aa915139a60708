#!/usr/bin/env bash
# Session 25, GPU call 1 (carry [".gl", ".pk"] from scripts/pack1.sh: the tree is branch
# merge-weights; "base" is main 4a2d3b9's turboprof). The branch's merge loads each split's (m, l)
# once per row (a subgroup per row, weights into shared memory) instead of once per vec4 of o,
# so an invocation's first 33 splits of o go out with the (m, l) in one round trip to L2.
# Expected (merge phase of the timeline): m 1 4K-32K (32-33 slots) 2 round trips -> 1, ~1.9 ->
# ~1.2 us; m 1 128K (49) 3 -> 2; m 2 (two vec4s an invocation) 4 -> 2; m 3 rows16 (three) 6 -> 3,
# q8_0 4.9 -> ~2.7 us; calls faster by about as much. Registers about the same (the merge's
# 33 vec4s are fewer than the tile loop's live values).
source bench/gpu_prelude.sh
tst tc 240 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
tst app 150 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
for l in main base; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b timeline --types turbo3,q8_0,f16 --ctx 32k --m 1 --repeat 2 > $R/stats-$l.txt 2>&1
  TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b timeline --types turbo3,q8_0 --ctx 32k --m 3 --repeat 2 >> $R/stats-$l.txt 2>&1
  TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b timeline --fused --types turbo3,q8_0 --ctx 4k --m 1 --repeat 2 >> $R/stats-$l.txt 2>&1
done
lg "stats"
for round in 1 2; do
  for l in base main; do
    rows timeline.txt "$round $l m1" $l timeline --types turbo3,turbo4,q8_0,f16,turbo2 --ctx 4k,32k,128k --m 1 --repeat 5
    for m in 2 3 8; do rows timeline.txt "$round $l m$m" $l timeline --types turbo3,turbo4,q8_0,f16 --ctx 32k --m $m --repeat 5; done
    rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,turbo4,q8_0,f16 --ctx 4k --m 1 --repeat 5
  done
  lg "timelines r$round"
done
cat $R/progress.txt; grep -ihE "regist" $R/stats-*.txt | head -30
awk '{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "us="$(i+6), "pro="$(i+9), "tiles="$(i+10), "arr="$(i+12), "merge="$(i+13)}' $R/timeline.txt | sort -k3,3 -k4,4 -k5,5 -k6,6 -k2,2 -k1,1
