#!/usr/bin/env bash
# Session 27, GPU call 1 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh` at b5ddfe4). One
# build; "on" is its plan (a long last split where that saves every split a step), "off" the same
# build with TKV_LONG_LAST=0 (the plans of session 26).
# Expected: fused m 1 at 4100 / 4160 old tokens (32 two-step splits + the last taking 4-64 tokens,
# instead of 22 three-step splits) ~0.5 us faster, near the 4096 figure; bench_append's fused rows
# (their steps run at 4097+ old tokens) lower, P7 turbo3 ~6% -> ~3-4%; fused m 8 4K (7 x 576 + the
# last 64 instead of 7 x 640) a little faster or even; plain f16 64K (33 x 1984 instead of 32 x
# 2048) even; every other plan unchanged.
source bench/gpu_prelude.sh
tst tc 150 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
tst app 200 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*:*LongLastSplit*'
tst dec 60 build-slim/tests/test_decode --gtest_filter='*LongLastSplit*'
on() { unset TKV_LONG_LAST; }
off() { export TKV_LONG_LAST=0; }
for round in 1 2; do
  for l in on off; do
    $l
    rows timeline.txt "$round $l m1 fused" main timeline --fused --types turbo3,turbo4,q8_0,turbo2 --ctx 4096,4100,4160 --m 1 --repeat 5
    rows timeline.txt "$round $l m8 fused" main timeline --fused --types turbo3,q8_0 --ctx 4k --m 8 --repeat 5
  done
  lg "timelines r$round"
  for l in on off; do $l; [ $((SECONDS-T0)) -lt 420 ] && app append.txt "$round $l" main 'fused/llama8b'; done
  lg "append r$round"
  for l in on off; do $l; [ $((SECONDS-T0)) -lt 480 ] && rows plain.txt "$round $l" main profile --types f16,turbo3 --ctx 64k --m 1 --modes 0 --repeat 20; done
  lg "plain r$round"
done
unset TKV_LONG_LAST
cat $R/progress.txt
awk '$0 !~ / type /{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "late="$(i+5), "us="$(i+6), "tmax="$(i+11), "trows="$(i+15), "attend="$(i+16), "last="$NF}' $R/timeline.txt | sort -k5,5 -k6,6 -k4,4 -k2,2 -k1,1
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, d, f, r}' $R/append.txt | sort -k3,3 -k2,2 -k1,1
cat $R/plain.txt
