# Session 10, run 7: run5's kernels (tile words per invocation) with the planner's 8-step minimum
# for fused tc splits; tests, append rows, fused rows at the plan's splits.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
timeout 200 build-run/tests/test_append_decode --gtest_brief=1 > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_cache --gtest_brief=1 >> $o/tests.txt 2>&1; echo "cache rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_decode_tc --gtest_brief=1 >> $o/tests.txt 2>&1; echo "tc rc $?" >> $o/tests.txt
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=append > $o/append4k.txt 2>&1
b() { env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$*" '{print b, $0}' >> $o/fused.txt; }
b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=f16,q8_0,turbo2,turbo3,turbo4
b TKV_BENCH_APPEND_CTX=8k TKV_BENCH_TYPES=turbo3
b TKV_BENCH_APPEND_CTX=16k TKV_BENCH_TYPES=turbo3
b TKV_BENCH_APPEND_CTX=32k TKV_BENCH_TYPES=turbo3,q8_0
