#!/usr/bin/env bash
# Session 28, GPU call 4 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append` on branch split-append). main = run3's form with: the new
# rows written through the pools' second, plain bindings (10, 11; reads stay coherent), one
# memoryBarrierBuffer before the prologue's barrier; the columns of up to 4 rows quantize on
# subgroups 2 and 3 while 0 and 1 take the query rows two each; rows16 and WIDE on four subgroups.
# Expected: test_append_decode passes; the split holding the new tokens no longer the last by
# ~1-2 us (run3: its prologue 4.6 us against 2.1); fused m 8 4K back to ~26 us or below; the
# fused steps at 4K at ~1-3% of the decode step for every type.
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
for l in base main; do
  labeled append.txt "1 $l 4k" $l 100 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 main 32k" main 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
labeled tl.txt "1 main" main 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,q8_0 --ctx 4100 --repeat 20
labeled tl.txt "1 main m8" main 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --m 8 --types turbo3 --ctx 4k --repeat 20
lg "bench"
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
