# Session 10, run 9: knock-outs of the fused tc tail's quantizer at 5e5ff68 (scripts/knockout2.patch,
# TKV_QR_KO bits: 1 no serial norm sums, 2 no Hadamard, 4 no stores, 8 no loads of the new rows;
# 15 all four), turbo3 at ctx 16 (the tail's chain against a one-tile split) and 4K.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3 timeout 60 build-run/bench/$bin --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$bin $*" '{print b, $0}' >> $o/ko2.txt; }
for bin in bench_append bench_append_ko1 bench_append_ko2 bench_append_ko4 bench_append_ko8 bench_append_ko15; do
  b $bin TKV_BENCH_APPEND_CTX=16
  b $bin TKV_BENCH_APPEND_CTX=4k
done
