#!/usr/bin/env bash
# Session 16 run 5 (H200): new4 = every type quantized by one subgroup in registers (q8_0 and f16
# too), the fused tail's rows always shared out to subgroups (the scalar kernel's tail no longer
# runs them one at a time on the whole workgroup), rows stored after the round's barrier; c2 = new4
# with the scalar kernel's tail quantizing K and V at once (QR_COPIES 2). Against n3ms0 (= 86905d1).
# GPU tests of new4 first; then two rounds of the append and fused steps, every type, f32 rows;
# then the fused pipelines' registers.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-final
mkdir -p $OUT/t
(timeout 100 build-slim/tests/test_decode_tc 2>&1 | grep -E "PASSED|FAILED"
 timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -4
 timeout 60 build-slim/tests/test_cache --gtest_brief=1 --gtest_filter='*Quantize*:*Golden*' 2>&1 | tail -3) | tee $OUT/t/tests.txt
for round in 1 2; do
  for l in n3ms0 new4 c2; do
    TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-$l --benchmark_filter='append/|fused/' 2>&1 | grep -E "^(append|fused)/" | sed "s/^/$round $l /"
  done
done | tee $OUT/t/append.txt | awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^(append_layer_us|decode_step_us|fused_step_us|ratio_pct)=/) x = x " " $i; print $1, $2, $3, x; x = ""}'
for l in new4 c2; do
  TKV_LOG=info TKV_PIPELINE_STATS=1 TKV_BENCH_TYPES=q8_0,f16 TKV_BENCH_APPEND_FORMATS=f32 timeout 60 build-ab/bench_append-$l --benchmark_filter='fused/' 2>&1 | grep -oE "built pipeline decode_append with constants \[[0-9,]*\] Register Count = [0-9]+" | sed "s/^/$l /"
done | tee $OUT/t/registers.txt
