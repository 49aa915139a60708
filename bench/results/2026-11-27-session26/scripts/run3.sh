#!/usr/bin/env bash
# Session 26, GPU call 3 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=ff90ebc:turboprof,bench_append s3=0e9d7c2:turboprof,bench_append` on branch tail-store,
# 25a3fda). main = tail-store: the turbo store into a tile an invocation per field (run1: without
# any store the tail's attend phase was ~2 us shorter for turbo; the old per-word store loop is
# ~660 instructions a word). s3 = tail-store + session 24's third-slot plan rule (the tails in an
# SM's free third tc slot, 33 two-step splits past 4096 old tokens), which lost in session 24
# because the SMs holding a tail slowed their splits.
# Expected: main: turbo tail attend 3.5 -> ~1.7 us (m 1), fused m 8 4K turbo3 29 -> ~25 us, plain
# calls even; s3: fused 4100 even with fused 4096 if the lighter tail no longer slows its SM's
# splits, bench_append's fused rows (P7) toward the 4096 figure.
source bench/gpu_prelude.sh
tst tc 240 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
tst app 300 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
for round in 1 2; do
  for l in base main s3; do
    rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,turbo4,q8_0,turbo2 --ctx 4096,4100,4160 --m 1 --repeat 5
    rows timeline.txt "$round $l m8 fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k --m 8 --repeat 5
  done
  lg "timelines r$round"
  for l in base main s3; do [ $((SECONDS-T0)) -lt 480 ] && app append.txt "$round $l" $l 'fused/llama8b'; done
  lg "append r$round"
done
cat $R/progress.txt
awk '$0 !~ / type /{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "late="$(i+5), "us="$(i+6), "tmax="$(i+11), "trows="$(i+15), "attend="$(i+16), "last="$NF}' $R/timeline.txt | sort -k5,5 -k6,6 -k4,4 -k2,2 -k1,1
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, d, f, r}' $R/append.txt | sort -k3,3 -k2,2 -k1,1
