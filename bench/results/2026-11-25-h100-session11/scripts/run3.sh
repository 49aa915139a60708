# Session 11, run 3: the tc kernel's first tile fetched before the query prologue, its page read
# from the table itself (_early) against 8ffcdb9's kernel (_base). Tests on _early; modes 0 and 1
# (P2) at 1K-128K for the turbo types, two rounds alternating; fused 4K.
source bench/gpu_env.sh build-run/profile/turboprof_base
I=/tmp/s11r3; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 90 build-run/tests/test_decode_tc_early --gtest_brief=1 > $I/tests.txt 2>&1; echo "tc rc $?" >> $I/tests.txt
timeout 150 build-run/tests/test_append_decode_early --gtest_brief=1 >> $I/tests.txt 2>&1; echo "append rc $?" >> $I/tests.txt
for round in 1 2; do
  for v in base early; do
    timeout 100 build-run/profile/turboprof_$v profile --workload llama8b --ctx 1k,4k,8k,32k,128k --types turbo2,turbo3,turbo4 \
      --modes 0,1 --repeat 20 > $I/prof_${v}_round$round.txt 2>&1
  done
done
for v in base early; do
  TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3 timeout 60 build-run/bench/bench_append_$v --benchmark_filter=fused 2>&1 | grep "^fused/" > $I/fused_$v.txt
done
tar czf $OUT/run3.tar.gz -C /tmp s11r3
