#!/usr/bin/env bash
# Session 28, GPU call 2 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append` on branch split-append). main = the tc kernel's fused
# append without tails: the splits that hold the new tokens quantize and store them first, then
# read them back with the old ones (coherent pools); the plan is the decode plan over the
# appended cache (33 two-step splits at 4097-4160 tokens, not 22 three-step ones).
# Expected: test_append_decode passes on the tensor cores; bench_append's fused steps at 4K
# (4096-4159 old tokens) cost ~0-3% of the decode step instead of 6-9%; at 32K about as before.
source bench/gpu_prelude.sh
tst app 240 build-slim/tests/test_append_decode
for l in base main; do
  TKV_BENCH_TYPES=q8_0,turbo3,turbo4 labeled append.txt "1 $l 4k" $l 150 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
lg "4k"
for l in base main; do
  TKV_BENCH_TYPES=turbo3 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
lg "32k"
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
