# Session 11, run 8: the fused pipelines' registers and shared memory against the decode ones
# (1e2c2ba's shaders; pipeline statistics from the driver), turbo3 and f16 at 4K.
source bench/gpu_env.sh build-run/profile/turboprof_restrict
I=/tmp/s11r8; rm -rf $I; mkdir -p $I
TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_BENCH_REPEAT=8 TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3,f16 \
  timeout 100 build-run/bench/bench_append_restrict --benchmark_filter=fused > $I/run.txt 2>&1
grep "built pipeline" $I/run.txt | sed -E 's/.*built pipeline ([a-z_]+) with constants (\[[^]]*\]) Register Count = ([0-9]+).*Shared Memory Size = ([0-9]+).*/\1 \2 regs \3 shared \4/' > $I/stats.txt
cp $I/stats.txt $OUT/
