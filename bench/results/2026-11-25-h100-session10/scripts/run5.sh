# Session 10, run 5: run2's kernels with the tile-word loop unrolled (at most 8 pairs a word);
# the append rows (quantize.comp runs the same store); fused rows at 4K; the fused call at forced
# split counts (TKV_BENCH_SPLITS, all three ways).
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
timeout 150 build-run/tests/test_append_decode --gtest_brief=1 > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_cache --gtest_brief=1 >> $o/tests.txt 2>&1; echo "cache rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_decode_tc --gtest_brief=1 >> $o/tests.txt 2>&1; echo "tc rc $?" >> $o/tests.txt
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=append > $o/append4k.txt 2>&1
b() { env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$*" '{print b, $0}' >> $o/fused.txt; }
b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=f16,q8_0,turbo2,turbo3,turbo4
for n in 8 16 33; do b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=f16,turbo3 TKV_BENCH_SPLITS=$n; done
