# Session 10, run 10: the subgroup quantizer's Hadamard in registers (shuffles, rotation.glsl's
# TKV_HADAMARD_REGISTERS) and the page loaded before the row; tests (the cache's bytes equal the
# append's), append rows, fused rows (turbo3 at ctx 16 and 4K; every type at 4K).
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
timeout 200 build-run/tests/test_append_decode --gtest_brief=1 > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_cache --gtest_brief=1 >> $o/tests.txt 2>&1; echo "cache rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_decode_tc --gtest_brief=1 >> $o/tests.txt 2>&1; echo "tc rc $?" >> $o/tests.txt
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3 timeout 60 build-run/bench/bench_append --benchmark_filter=append > $o/append4k.txt 2>&1
b() { env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$*" '{print b, $0}' >> $o/fused.txt; }
b TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=turbo3
b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo2,turbo3,turbo4
b TKV_BENCH_APPEND_CTX=32k TKV_BENCH_TYPES=turbo3
