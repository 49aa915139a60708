# Session 12, run 1: turbo2's exact codebook in the tc kernel (_new: no lo halves for turbo2
# operands, one score MMA per 16 tokens, one output MMA per block) against 5d1e5d2 (_base).
# Tests on _new (test_decode_tc, test_decode's GPU cases); turboprof m 1 modes 0/1 at 8K, 32K,
# 128K, m 8 at 32K and batch 16 at 8K, two rounds; registers and the loop's SASS of both.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s12r1; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 120 build-run/tests/test_decode_tc_new --gtest_brief=1 > $I/tests_tc.txt 2>&1; echo "rc $?" >> $I/tests_tc.txt
timeout 150 build-run/tests/test_decode_new --gtest_brief=1 --gtest_filter=-*LargeContexts* > $I/tests_decode.txt 2>&1; echo "rc $?" >> $I/tests_decode.txt
P() { v=$1; shift; timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in base new; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3 --modes 0,1 > $I/m1_${v}_round$round.txt 2>&1
    P $v --ctx 32k --types turbo2 --m 8 --modes 0 > $I/m8_${v}_round$round.txt 2>&1
    P $v --ctx 8k --types turbo2 --batch 16 --modes 0 > $I/b16_${v}_round$round.txt 2>&1
  done
done
for v in base new; do
  mkdir -p $I/sass_$v
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_$v timeout 90 build-run/profile/turboprof_$v profile \
    --workload llama8b --ctx 128k --types turbo2 --modes 0 --repeat 5 > $I/stats_run_$v.txt 2>&1
  python3 bench/sass_dump.py $I/sass_$v $I/cache_$v > /dev/null 2>&1
  for f in $I/sass_$v/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_$v.txt 2>&1
  grep "decode_tc" $I/stats_run_$v.txt | grep "Register Count" | cut -c1-300 > $I/stats_$v.txt
  rm -rf $I/cache_$v
done
tar czf $OUT/run1.tar.gz -C /tmp s12r1
