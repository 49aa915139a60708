# Session 10, run 14: the tile-word loop without its data-dependent break (scripts/nobreak.patch:
# every pair guarded instead) against e2a4b62; turbo2-4 at ctx 16 and 4K, two rounds.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 60 build-run/bench/$bin --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$bin $*" '{print b, $0}' >> $o/nobreak.txt; }
for round in 1 2; do
  for bin in bench_append bench_append_nobreak; do
    b $bin TKV_BENCH_APPEND_CTX=16 TKV_BENCH_TYPES=turbo3
    b $bin TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo2,turbo3,turbo4
  done
done
