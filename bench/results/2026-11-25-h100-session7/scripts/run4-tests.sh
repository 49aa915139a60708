#!/usr/bin/env bash
# session 7 run 4: the GPU suites at the final sources (LargeContexts ran in run 3 on the same kernels)
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh
B=build-run
start=$(date +%s)
for t in test_vk_runtime test_plan test_cache test_decode_tc test_decode_modes test_variants_modes test_decode; do
  timeout 300 $B/tests/$t --gtest_brief=1 > /tmp/$t.txt 2>&1; rc=$?
  echo "$t rc $rc at $(( $(date +%s) - start )) s"; tail -3 /tmp/$t.txt
done 2>&1 | tee $OUT/tests-gpu.txt
