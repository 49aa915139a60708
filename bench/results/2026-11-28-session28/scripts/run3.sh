#!/usr/bin/env bash
# Session 28, GPU call 3 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append` on branch split-append). main = run2's change with the
# partials' slot count fixed (no tail slot in the tc kernel: run2's failures with two or more row
# chunks) and the new rows quantized on two subgroups while the others run the prologue (the
# quantizer's arrays after the tables; no workgroup barrier of its own).
# Expected: test_append_decode passes; the fused steps at 4K at ~1-3% of the decode step for
# every type (run2: q8_0 1.2-2.1%, turbo3 7.3-7.8%, turbo4 6.3-6.8% with the serial quantizer).
source bench/gpu_prelude.sh
tst app 240 build-slim/tests/test_append_decode
for l in base main; do
  labeled append.txt "1 $l 4k" $l 150 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  labeled tl.txt "1 $l" $l 60 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,q8_0 --ctx 4100 --repeat 20
  labeled tl.txt "1 $l m8" $l 60 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --m 8 --types turbo3 --ctx 4k --repeat 20
done
lg "bench"
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
