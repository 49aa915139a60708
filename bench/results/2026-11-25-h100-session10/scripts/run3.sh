# Session 10, run 3: knock-outs of the fused tail (run2's sources; TKV_TAIL_KO, a temporary
# constant in append_tail.glsl: 1 no quantize math, 2 no stores, 3 no rows at all, 4 no rows, query
# rows or scores: partials only), the tail alone (ctx 16: no regular split holds tokens... the
# sequence's old tokens are 15), and the scalar kernel (smem) on turbo3.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/$bin --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b=$bin '{print b, $0}' >> $o/ko.txt; }
for bin in bench_append bench_append_ko1 bench_append_ko2 bench_append_ko3 bench_append_ko4; do
  b $bin TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=f16,turbo3
done
b bench_append TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo3 TKV_BENCH_VARIANT=smem
b bench_append_ko3 TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo3 TKV_BENCH_VARIANT=smem
b bench_append TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=f16,turbo3
b bench_append_ko4 TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=f16,turbo3
b bench_append TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=turbo3 TKV_BENCH_VARIANT=smem
