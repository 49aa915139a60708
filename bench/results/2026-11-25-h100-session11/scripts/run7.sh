# Session 11, run 7: the tile words' assembly visiting only the token's pairs (_restrict) against
# 276e0cb (_base). Tests on _restrict (bytes equal the append's and the CPU codec's); fused rows
# (turbo3 ctx 16: the tail's chain alone; 4K turbo2/3/4) and the separate append, two rounds.
source bench/gpu_env.sh build-run/profile/turboprof_restrict
I=/tmp/s11r7; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 150 build-run/tests/test_append_decode_restrict --gtest_brief=1 > $I/tests.txt 2>&1; echo "append rc $?" >> $I/tests.txt
timeout 60 build-run/tests/test_cache_restrict --gtest_brief=1 >> $I/tests.txt 2>&1; echo "cache rc $?" >> $I/tests.txt
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 60 build-run/bench/$bin 2>&1 | grep -E "^(fused|append)/" | sed -E 's/ +/ /g' | cut -c1-260 | awk -v b="$bin $*" '{print b, $0}' >> $I/rows.txt; }
for round in 1 2; do
  for v in base restrict; do
    b bench_append_$v TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=turbo3
    b bench_append_$v TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=$( ((round == 1)) && echo turbo2,turbo3,turbo4 || echo turbo3)
  done
done
tar czf $OUT/run7.tar.gz -C /tmp s11r7
