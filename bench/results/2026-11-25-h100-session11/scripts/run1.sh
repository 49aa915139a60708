# Session 11, run 1: tc column tiles (NT = rows / 4 per workgroup, one A fragment per tile for all
# of them). Builds differ only in attention/plan.cpp's kTensorCoreMaxRows (_r4: the old 4 rows,
# _r8, _r16). Tests with 8 and 16; turboprof m = 1, 2, 3, 8 at 8K and 32K; fused 4K (NT = 1).
source bench/gpu_env.sh build-run/profile/turboprof_r8
o=$OUT; (nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $o/device.txt 2>&1
for r in 16 8; do timeout 90 build-run/tests/test_decode_tc_r$r --gtest_brief=1 > $o/tests_tc_r$r.txt 2>&1; echo "rc $?" >> $o/tests_tc_r$r.txt; done
timeout 150 build-run/tests/test_append_decode_r16 --gtest_brief=1 > $o/tests_append_r16.txt 2>&1; echo "rc $?" >> $o/tests_append_r16.txt
for round in 1 2; do
  ((round == 2 && SECONDS > 330)) && break
  for r in 4 8 16; do
    for m in 1 2 3 8; do
      timeout 60 build-run/profile/turboprof_r$r profile --workload llama8b --ctx 8k,32k --types turbo2,turbo3,turbo4 --m $m --modes 0 --repeat 20 > $o/prof_r${r}_m${m}_round$round.txt 2>&1
    done
  done
done
TKV_BENCH_APPEND_CTX=4k TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_TYPES=turbo3,turbo4 timeout 100 build-run/bench/bench_append_r8 --benchmark_filter=fused > $o/fused4k.txt 2>&1
