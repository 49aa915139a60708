#!/usr/bin/env bash
# Session 25, GPU call 3 (carry [".gl", ".pk"] from scripts/pack1.sh at the branch's next
# commit). Why: run2's machine code showed the branch's 33 loads of o in flight before the
# weights, as meant, but the sum after them a branch per split around a shared-memory load of
# its weight: 33 dependent LDS round trips an invocation (~0.7 us an item). Now every weight of a
# chunk is set (0 past its splits) and the sum reads them without a branch.
# Expected: the merge phase below main's (m 1 4K ~1.7 -> ~1.2 us; m 3 q8_0 4.8 -> ~3).
source bench/gpu_prelude.sh
tst tc 240 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
for round in 1 2; do
  for l in base main; do
    rows timeline.txt "$round $l m1" $l timeline --types turbo3,q8_0,f16 --ctx 4k,32k,128k --m 1 --repeat 5
    for m in 2 3 8; do rows timeline.txt "$round $l m$m" $l timeline --types turbo3,q8_0 --ctx 32k --m $m --repeat 5; done
    rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k --m 1 --repeat 5
  done
  lg "timelines r$round"
done
cat $R/progress.txt
awk '{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "us="$(i+6), "pro="$(i+9), "tiles="$(i+10), "arr="$(i+12), "merge="$(i+13)}' $R/timeline.txt | sort -k3,3 -k4,4 -k5,5 -k6,6 -k2,2 -k1,1
