#!/usr/bin/env bash
# Session 28, GPU call 5: NOT RUN (the session's device time was spent); for the next session.
# carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append` on
# branch split-append at its last commit. main = run4's plain writes, the quantizers on subgroups
# 0 and 1 beside their own query rows (no pairing), every pool write a relaxed atomic (barriers on
# each side of the prologue's), and only the tiles that hold new tokens read
# through coherent views (every other tile as the plain kernel reads it).
# First the fused and plain pipelines' registers and spills (the 32K cost of runs 3-4 must be in
# every split), then the tests, then bench_append at 4K and 32K, every type, base / main.
# Expected: the fused pipelines' registers as the plain ones'; 32K fused calls ~0.5% as base;
# 4K: q8_0 ~2-4%, turbo within ~1 point of base or better.
source bench/gpu_prelude.sh
for l in base main; do
  TKV_PIPELINE_STATS=1 TKV_LOG=info labeled regs.txt "1 $l" $l 60 "built pipeline decode|rror" $P timeline --fused --types turbo3,q8_0 --ctx 32k,4100 --repeat 2
  TKV_PIPELINE_STATS=1 TKV_LOG=info labeled regs.txt "1 $l plain" $l 60 "built pipeline decode|rror" $P profile --types turbo3,q8_0 --ctx 32k,4100 --modes 0 --repeat 2
done
lg "regs"
# The fused q8_0 pipeline's machine code at 32K, base / main (LDG forms, MEMBAR, LDL / STL).
sass fq8 base timeline --fused --types q8_0 --ctx 32k --repeat 2
sass fq8m main timeline --fused --types q8_0 --ctx 32k --repeat 2
lg "sass"
tst app 200 build-slim/tests/test_append_decode
for l in base main; do
  labeled append.txt "1 $l 4k" $l 100 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  labeled tl.txt "1 $l" $l 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,q8_0 --ctx 4100 --repeat 20
done
lg "bench"
cat $R/progress.txt
sed -E 's/\[20[^]]*\] \[info\] turbokv: built pipeline //' $R/regs.txt | sort | uniq | cut -c1-220 | head -40
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
