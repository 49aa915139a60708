# Session 12, run 6: two tiles in flight ahead of the computed one for turbo2/turbo3 (_d2; turbo4
# keeps one) against 3488e4a (_new). Tests on _d2 (test_decode_tc; test_append_decode for the
# fused loop); turboprof modes 0 and 1 at 8K, 32K, 128K, turbo2/turbo3/turbo4, two rounds;
# registers and the loops' SASS of _d2.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s12r6; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
timeout 120 build-run/tests/test_decode_tc_d2 --gtest_brief=1 > $I/tests_tc_d2.txt 2>&1; echo "rc $?" >> $I/tests_tc_d2.txt
P() { v=$1; shift; timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in new d2; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in d2; do
  mkdir -p $I/sass_$v
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_$v timeout 90 build-run/profile/turboprof_$v profile \
    --workload llama8b --ctx 128k --types turbo2,turbo3 --modes 0 --repeat 5 > $I/stats_run_$v.txt 2>&1
  python3 bench/sass_dump.py $I/sass_$v $I/cache_$v > /dev/null 2>&1
  for f in $I/sass_$v/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_$v.txt 2>&1
  grep "decode_tc" $I/stats_run_$v.txt | grep "Register Count" | cut -c1-300 > $I/stats_$v.txt
  rm -rf $I/cache_$v
done
timeout 170 build-run/tests/test_append_decode_d2 --gtest_brief=1 > $I/tests_append_d2.txt 2>&1; echo "rc $?" >> $I/tests_append_d2.txt
tar czf $OUT/run6.tar.gz -C /tmp s12r6
