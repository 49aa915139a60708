# Session 10, run 12: the fused tail's pool atomics at 54eaba6 (scripts/knockout3.patch,
# TKV_ATOMIC_KO: 1 no atomicAnd (atomicOr alone, as if the token's bits were known zero), 2 neither, 3 plain stores of the set bits instead (wrong words: timing only)
# (the words assembled, not written)); turbo3 at ctx 16 and 4K, two rounds.
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3 timeout 60 build-run/bench/$bin --benchmark_filter=fused 2>&1 | grep "^fused/" | sed -E 's/ +/ /g' | awk -v b="$bin $*" '{print b, $0}' >> $o/ko4.txt; }
for round in 1 2; do
  for bin in bench_append bench_append_ako2 bench_append_ako3; do
    b $bin TKV_BENCH_APPEND_CTX=16
    b $bin TKV_BENCH_APPEND_CTX=4k
  done
done
