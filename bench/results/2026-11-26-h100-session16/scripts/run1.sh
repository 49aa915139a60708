#!/usr/bin/env bash
# Session 16 run 1: turbo rows quantized by one subgroup in registers (quantize_row.glsl; the
# fused tail's query rows too), against base (5e3ca9c). GPU tests of the new build first; then the
# fused step (bench_append fused/, f32 rows) of base, new, and new with kTensorCoreFusedMinSteps
# 4 and 2 (ms4, ms2); then decode calls (turboprof profile) of last session's final and new.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
(timeout 100 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |PASSED|FAILED"
 timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -4
 timeout 60 build-slim/tests/test_cache --gtest_brief=1 --gtest_filter='*Quantize*:*Golden*' 2>&1 | tail -4) | tee $OUT/t/tests.txt | tail -12
for l in base new ms4 ms2; do
  TKV_BENCH_APPEND_FORMATS=f32 timeout 120 build-ab/bench_append-$l --benchmark_filter='fused/' 2>&1 | grep fused/ | sed "s/^/$l /"
done | tee $OUT/t/append.txt | awk '{print $1, $2, $0 ~ /fused_step_us/ ? "" : ""}' | head -0
cut -c1-220 $OUT/t/append.txt
for round in 1 2; do
  for l in final new; do
    build-ab/turboprof-$l profile --workload llama8b --types turbo3,f16 --ctx 1k,8k,32k --modes 0 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
