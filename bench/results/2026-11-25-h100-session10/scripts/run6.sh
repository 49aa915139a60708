# Session 10, run 6: tile words by clusters of 8 invocations OR-ed by shuffles (quantize.comp's
# workgroups and the fused tail); append rows; fused rows at the plan's and forced split counts.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
timeout 150 build-run/tests/test_append_decode --gtest_brief=1 > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_cache --gtest_brief=1 >> $o/tests.txt 2>&1; echo "cache rc $?" >> $o/tests.txt
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=f16,turbo2,turbo3,turbo4 timeout 100 build-run/bench/bench_append --benchmark_filter=append > $o/append4k.txt 2>&1
b() { env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/bench_append --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$*" '{print b, $0}' >> $o/fused.txt; }
b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo2,turbo3,turbo4
for n in 12 16; do b TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo3 TKV_BENCH_SPLITS=$n; done
for n in 0 16 24; do b TKV_BENCH_APPEND_CTX=8k TKV_BENCH_TYPES=turbo3 TKV_BENCH_SPLITS=$n; done
for n in 0 16 32; do b TKV_BENCH_APPEND_CTX=16k TKV_BENCH_TYPES=turbo3 TKV_BENCH_SPLITS=$n; done
for n in 0 16 24; do b TKV_BENCH_APPEND_CTX=32k TKV_BENCH_TYPES=turbo3 TKV_BENCH_SPLITS=$n; done
