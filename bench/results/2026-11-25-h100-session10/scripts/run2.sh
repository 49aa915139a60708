# Session 10, run 2 (sources: 2a68882 + tile words assembled per invocation, no shared atomics; query rows on the subgroups the rows leave free).
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT; (nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $o/device.txt 2>&1
timeout 150 build-run/tests/test_append_decode > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_decode_tc --gtest_brief=1 >> $o/tests.txt 2>&1; echo "tc rc $?" >> $o/tests.txt
timeout 60 build-run/tests/test_cache --gtest_brief=1 >> $o/tests.txt 2>&1; echo "cache rc $?" >> $o/tests.txt
b() { TKV_BENCH_APPEND_CTX=$1 TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=$2 timeout 120 build-run/bench/bench_append --benchmark_filter=fused >> $o/fused.txt 2>&1; }
b 4k f16,q8_0,turbo2,turbo3,turbo4
b 8k turbo3
b 16k turbo3
b 32k turbo3,q8_0
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=f16,q8_0,turbo3 timeout 100 build-run/bench/bench_append --benchmark_filter=append > $o/append4k.txt 2>&1
