#!/usr/bin/env bash
# Session 16 run 6 (H200): new5 = run 5's new4 (every type quantized by one subgroup in registers,
# the fused tail's rows always on subgroups), and the append shader (quantize.comp) a subgroup per
# row, 4 rows per workgroup, so that no whole-workgroup mode is left. Against n3ms0 (= 86905d1).
# GPU tests of new5 first; then two rounds of the append and fused steps, every type, f32 rows.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-final
mkdir -p $OUT/t
(timeout 100 build-slim/tests/test_decode_tc 2>&1 | grep -E "PASSED|FAILED"
 timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -4
 timeout 120 build-slim/tests/test_cache --gtest_brief=1 2>&1 | tail -3) | tee $OUT/t/tests.txt
for round in 1 2; do
  for l in n3ms0 new5; do
    TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-$l --benchmark_filter='append/|fused/' 2>&1 | grep -E "^(append|fused)/" | sed "s/^/$round $l /"
  done
done | tee $OUT/t/append.txt | awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^(append_layer_us|decode_step_us|fused_step_us|ratio_pct)=/) x = x " " $i; print $1, $2, $3, x; x = ""}'
