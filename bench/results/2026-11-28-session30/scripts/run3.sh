#!/usr/bin/env bash
# Session 30, GPU call 3. carry [".gl", ".pk"]; pack on branch p7-store (b9779b4):
# `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append`.
# main = p7-defer with a turbo side's new bits stored whole by the fetch that patches them (plain
# stores of the patched words that hold new bits; no ov_flush atomics after the tile loop) and no
# page looked up after the quantizer (the overlay is addressed as in page 0). Run 2: ov_flush cost
# the fresh split's tiles 1.34 -> 2.24 us; without it (nofl) turbo3 7.3-8.5%, its prologue still
# 5.0 us against nostore's 4.32 (session 29: no page lookup there). Expected: that split's
# prologue ~4.3-4.5 us, its tiles ~1.3, turbo2 / turbo3 at 4K ~3-5%, the tests pass.
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
TKV_BENCH_TYPES=turbo2,turbo3,q8_0 labeled append.txt "3 base 4k" base 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
labeled append.txt "3 main 4k" main 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "3 main 32k" main 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
lg "bench"
labeled tl.txt "3 main" main 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
lg "timeline"
tst tc 150 build-slim/tests/test_decode_tc
cat $R/progress.txt
append_summary
cut -c1-250 $R/tl.txt
