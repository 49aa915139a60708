# Session 10, run 4: run2's kernels with the planner's reservation fixed (tails need room only
# within the most workgroups a unit holds: the fused plans equal the decode plans again); knock-outs
# 1 and 2 again (scripts/knockout.patch) with register counts (TKV_PIPELINE_STATS=1).
source bench/gpu_env.sh build-run/profile/turboprof
o=$OUT
timeout 150 build-run/tests/test_append_decode --gtest_brief=1 > $o/tests.txt 2>&1; echo "rc $?" >> $o/tests.txt
b() { bin=$1; shift; env "$@" TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-run/bench/$bin --benchmark_filter=fused > $o/tmp.txt 2>&1; grep -i "registers\|spill" $o/tmp.txt | sed "s/^/$bin /" >> $o/stats.txt; grep "^fused/" $o/tmp.txt | sed -E 's/ +/ /g' | awk -v b=$bin '{print b, $0}' >> $o/fused.txt; }
for bin in bench_append bench_append_ko1 bench_append_ko2; do
  b $bin TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=turbo3 TKV_PIPELINE_STATS=1 TKV_LOG=info
done
b bench_append TKV_BENCH_APPEND_CTX=4k TKV_BENCH_TYPES=f16,q8_0,turbo2,turbo4
b bench_append TKV_BENCH_APPEND_CTX=8k TKV_BENCH_TYPES=turbo3
b bench_append TKV_BENCH_APPEND_CTX=32k TKV_BENCH_TYPES=turbo3,q8_0
rm -f $o/tmp.txt
