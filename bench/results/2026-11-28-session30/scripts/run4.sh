#!/usr/bin/env bash
# Session 30's next call: NOT RUN (the session's device time was spent); the next session's first.
# carry [".gl", ".pk"]; pack on branch p7-store-pair (c1fa82a):
# `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append store=b9779b4:turboprof,bench_append`.
# main = p7-store with, in the fused split that holds new tokens of a turbo pair in four
# subgroups, the query rows on subgroups 2 and 3 (two each) and the tables built by them alone
# while 0 and 1 quantize. Expected: that split's prologue 4.4-4.6 -> ~3.3-3.6 us, turbo2 /
# turbo3 at 4K 8.3-9.8% -> ~4-6%, q8_0 / f16 / turbo4 as p7-store (pairing is for turbo pairs
# only); the tests pass (pairing has never run them).
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
TKV_BENCH_TYPES=turbo2,turbo3,q8_0 labeled append.txt "4 base 4k" base 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
TKV_BENCH_TYPES=turbo2,turbo3 labeled append.txt "4 store 4k" store 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
labeled append.txt "4 main 4k" main 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "4 main 32k" main 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
lg "bench"
for l in store main; do
  labeled tl.txt "4 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
lg "timelines"
tst tc 150 build-slim/tests/test_decode_tc
cat $R/progress.txt
append_summary
cut -c1-250 $R/tl.txt
