#!/usr/bin/env bash
# Session 18 run 3: the tails' pool writes through bindings of their own (10, 11), so that the
# splits' reads through 0 and 1 stay read-only: P7 (bench_append fused rows, f32, 4K) for base
# (866dddc), p1 (b4a5198, the fused splits planned on the old tokens) and head, two rounds; the
# plain and fused timelines at 4K; the GPU tests of the fused kernels.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
{ timeout 90 build-slim/tests/test_timeline 2>&1 | grep -E "OK|FAILED|PASSED|SKIPPED|Failure"
  timeout 120 build-slim/tests/test_append_decode 2>&1 | grep -E "OK|FAILED|PASSED|Failure"
} > $R/tests.txt 2>&1
for round in 1 2; do
  for l in base p1 head; do
    TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-$l --benchmark_filter='fused/' \
      --benchmark_out=$R/append-$l-$round.json --benchmark_out_format=json > $R/append-$l-$round.txt 2>&1
  done
done
for mode in "" --fused; do
  timeout 60 build-ab/turboprof-head timeline $mode --types turbo3,turbo4,turbo2,q8_0,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | sed "s/^/timeline${mode:- plain} /"
done > $R/timeline.txt 2>&1
tar czf $OUT/run3.tar.gz -C /tmp run3
cat $R/tests.txt | grep -vE "^\[       OK"; cat $R/timeline.txt
for f in $R/append-*.txt; do echo $f; grep -o "fused/llama8b/[a-z0-9_]*/f32\|ratio_pct=[0-9.]*" $f | paste - - ; done
