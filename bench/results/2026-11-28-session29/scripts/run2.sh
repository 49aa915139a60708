#!/usr/bin/env bash
# Session 29, GPU call 2 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append nostore=c0fc36f:turboprof,bench_append` on branch
# split-append-3). main = run1's split-append-2 with the tc tile loops run from each subgroup's
# last tile down, so that a split's new tokens are only in its subgroups' first fetches (before
# the loop; M <= 8 new tokens span at most two tiles, two subgroups' last): the turbo loops keep
# no fresh branch, the rows keep one (this tile's V at the top of its step). nostore = main
# without the new rows' stores (a knock-out: the quantizer alone, wrong results).
# Expected: turbo3 32K fused ~0.3% (run1 0.9-1.5%), q8_0 as run1; plain decode steps as base's
# (the order of tiles costs nothing); nostore's last-split prologue tells the stores' share of
# run1's 5.15 us.
source bench/gpu_prelude.sh
for l in base main; do
  TKV_BENCH_TYPES=turbo2,turbo3,q8_0 labeled append.txt "1 $l 4k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  labeled tl.txt "1 $l" $l 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,q8_0 --ctx 4100 --repeat 20
done
TKV_BENCH_TYPES=turbo3 labeled append.txt "1 nostore 4k" nostore 40 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
labeled tl.txt "1 nostore" nostore 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3 --ctx 4100 --repeat 20
lg "bench"
sass ft3 main timeline --fused --types turbo3 --ctx 32k --repeat 2
(cd $R && tar czf sass.tar.gz sass-ft3.tar.gz sass-ft3.txt && rm -f sass-ft3*)
lg "sass"
tst app 200 build-slim/tests/test_append_decode
tst tc 120 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
