# Session 12, run 2: the tc loop's A fragments all built before a phase's MMAs (_pre) against
# run 1's exact turbo2 (_new). Tests: test_decode_tc on both (errors printed), LargeContexts for
# turbo2 on _new; turboprof m 1 at 32K, 128K for the three turbo types, two rounds; registers and
# the loops' SASS of _pre.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s12r2; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
for v in new pre; do timeout 120 build-run/tests/test_decode_tc_$v --gtest_brief=1 > $I/tests_tc_$v.txt 2>&1; echo "rc $?" >> $I/tests_tc_$v.txt; done
P() { v=$1; shift; timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in new pre; do
    P $v --ctx 32k,128k --types turbo2,turbo3,turbo4 --modes 0 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in pre; do
  mkdir -p $I/sass_$v
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_$v timeout 90 build-run/profile/turboprof_$v profile \
    --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run_$v.txt 2>&1
  python3 bench/sass_dump.py $I/sass_$v $I/cache_$v > /dev/null 2>&1
  for f in $I/sass_$v/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_$v.txt 2>&1
  grep "decode_tc" $I/stats_run_$v.txt | grep "Register Count" | cut -c1-300 > $I/stats_$v.txt
  rm -rf $I/cache_$v
done
TKV_LARGE_CONTEXTS=turbo2 timeout 200 build-run/tests/test_decode_new --gtest_filter='*LargeContexts*' > $I/large_turbo2.txt 2>&1; echo "rc $?" >> $I/large_turbo2.txt
tar czf $OUT/run2.tar.gz -C /tmp s12r2
