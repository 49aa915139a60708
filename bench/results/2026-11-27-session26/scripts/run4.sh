#!/usr/bin/env bash
# Session 26, GPU call 4 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh base=25a3fda:turboprof`
# on branch tail-prefetch, d519fef). main = tail-prefetch: the fused tail loads each quantizing
# subgroup's next new row a round ahead; base = main at 25a3fda (the per-field store).
# Expected: fused m 8 4K turbo3 ~25.7 -> ~23.5 us (4 rounds, 3 load latencies fewer), m 3 one
# fewer, m 1 / m 2 (one round) even; registers of the fused pipelines even.
# Then the P1-P8 table of this build (the decode kernels are session 24's but for the fused tail).
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
for round in 1 2; do
  for l in base main; do
    for m in 1 3 8; do rows timeline.txt "$round $l m$m fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k,32k --m $m --repeat 5; done
  done
  lg "timelines r$round"
  [ $((SECONDS-T0)) -lt 200 ] || break
done
TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats timeout 60 $P timeline --fused --types turbo3,q8_0 --ctx 4k --m 8 --repeat 1 2>&1 | grep -iE 'regist|pipeline' | head -20 > $R/stats.txt
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout 330 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt 2>/dev/null; rm -rf $R/t
cat $R/progress.txt
awk '$0 !~ / type /{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "late="$(i+5), "us="$(i+6), "tmax="$(i+11), "trows="$(i+15), "attend="$(i+16), "last="$NF}' $R/timeline.txt | sort -k3,3 -k5,5 -k6,6 -k2,2 -k1,1
sed -n '/^target/,/targets met/p' $R/targets.txt | grep -v "^  "
