# Session 12, run 3: turbo4 tables of whole 8-bit fields, signs folded in (256 entries, no sign
# XORs in the loop): 16 copies (_t256, 32 KB) or 8 copies (_t256c8, 16 KB; every type's table
# then 8 copies) against 3488e4a (_new). Tests on both; turboprof m 1 at 8K, 32K, 128K, the three
# turbo types, two rounds; registers, shared memory and the loops' SASS.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s12r3; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
for v in t256 t256c8; do timeout 120 build-run/tests/test_decode_tc_$v --gtest_brief=1 > $I/tests_tc_$v.txt 2>&1; echo "rc $?" >> $I/tests_tc_$v.txt; done
P() { v=$1; shift; timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in new t256 t256c8; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in t256 t256c8; do
  mkdir -p $I/sass_$v
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_$v timeout 90 build-run/profile/turboprof_$v profile \
    --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run_$v.txt 2>&1
  python3 bench/sass_dump.py $I/sass_$v $I/cache_$v > /dev/null 2>&1
  for f in $I/sass_$v/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_$v.txt 2>&1
  grep "decode_tc" $I/stats_run_$v.txt | grep "Register Count" | cut -c1-300 > $I/stats_$v.txt
  rm -rf $I/cache_$v
done
tar czf $OUT/run3.tar.gz -C /tmp s12r3
