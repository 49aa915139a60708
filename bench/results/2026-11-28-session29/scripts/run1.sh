#!/usr/bin/env bash
# Session 29, GPU call 1 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append` on branch split-append-2). base = main's tails; main =
# session 28's run5 form (split-append, accc850) with: the acquire barrier after the prologue's
# barrier only in the split that holds new tokens (run5: every split's prologue +0.5 us, the
# barrier waiting for the first tile's loads); the coherent / plain choice of a tile's loads as
# one [[dont_flatten]] branch per fetch (run5's loop issued both, predicated: 64 LDG against 32);
# quantizers on subgroups 4 and 5 of six-subgroup workgroups (no query rows there); the query
# rows' loads issued before the quantizer and finished after it.
# Expected: 32K fused within ~0.5% of the decode step (run5 1.8-2.9%); the fused loop's LDG back
# to 32 with a branch around each fetch; 4K q8_0 ~2% (run5 1.9%), turbo 10-13% -> ~6-8%.
source bench/gpu_prelude.sh
for l in base main; do
  labeled append.txt "1 $l 4k" $l 100 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  labeled tl.txt "1 $l" $l 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,q8_0 --ctx 4100 --repeat 20
done
lg "bench"
TKV_PIPELINE_STATS=1 TKV_LOG=info labeled tl.txt "regs" main 60 "built pipeline decode|rror" $P timeline --fused --types turbo3,q8_0 --ctx 32k --repeat 2
sass fq8 main timeline --fused --types q8_0 --ctx 32k --repeat 2
sass ft3 main timeline --fused --types turbo3 --ctx 32k --repeat 2
(cd $R && tar czf sass.tar.gz sass-fq8.tar.gz sass-fq8.txt sass-ft3.tar.gz sass-ft3.txt && rm -f sass-fq8* sass-ft3*)
lg "sass"
tst app 200 build-slim/tests/test_append_decode
tst tc 150 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
grep -v "regs" $R/tl.txt | cut -c1-250
