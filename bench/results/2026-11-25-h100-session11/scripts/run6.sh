# Session 11, run 6: a split's row chunks launched side by side (the grid's x = split slot x row
# chunks + row chunk; _grid) against 8a33894 (_base, row chunks in y: a KV range's chunks far
# apart in launch order). Tests on _grid; m = 1, 2, 8 at 8K and 32K for f16, q8_0, turbo3.
source bench/gpu_env.sh build-run/profile/turboprof_base
I=/tmp/s11r6; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 60 build-run/tests/test_decode_tc_grid --gtest_brief=1 > $I/tests.txt 2>&1; echo "tc rc $?" >> $I/tests.txt
timeout 150 build-run/tests/test_append_decode_grid --gtest_brief=1 >> $I/tests.txt 2>&1; echo "append rc $?" >> $I/tests.txt
timeout 120 build-run/tests/test_decode_grid --gtest_brief=1 >> $I/tests.txt 2>&1; echo "decode rc $?" >> $I/tests.txt
for m in 8 2 1; do
  for v in base grid; do
    timeout 60 build-run/profile/turboprof_$v profile --workload llama8b --ctx 8k,32k --types f16,q8_0,turbo3 --m $m \
      --modes 0 --repeat 20 > $I/prof_${v}_m$m.txt 2>&1
  done
done
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3,q8_0 timeout 60 build-run/bench/bench_append_grid --benchmark_filter=fused 2>&1 | grep "^fused/" > $I/fused_grid.txt
tar czf $OUT/run6.tar.gz -C /tmp s11r6
