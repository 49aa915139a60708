# Session 13, run 4: turbo2's (exact) table as 32-bit entries in 32 copies (one shared-memory
# wavefront per read; its 64-bit entries in 16 copies took two for the same 32 bits), now in its
# own shared array tab32 (run 3 read them as components of the uvec2 region: +196 address
# instructions per tile, turbo2 128K 63.7 -> 83.7 us) against
# base = 35f755e: test_decode_tc and test_append_decode on the new build, then modes 0 and 1 at
# 8K/32K/128K (turbo2, turbo3 as control; mixed turbo2 K / turbo3 V not in turboprof), two
# rounds alternating, m 8 at 32K, batch 16 at 8K, the turbo2 loop's SASS.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s13r4; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
TKV_LOG=info timeout 120 build-run/tests/test_decode_tc > $I/tests_tc.txt 2>&1; echo "rc $?" >> $I/tests_tc.txt
timeout 170 build-run/tests/test_append_decode --gtest_brief=1 > $I/tests_append.txt 2>&1; echo "rc $?" >> $I/tests_append.txt
P() { v=$1; shift; TKV_CACHE_DIR=/tmp/cache_$v timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in base new; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3 --modes 0,1 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in base new; do
  P $v --ctx 32k --types turbo2,turbo3 --m 8 --modes 0 > $I/m8_$v.txt 2>&1
  P $v --ctx 8k --types turbo2,turbo3 --batch 16 --modes 0 > $I/b16_$v.txt 2>&1
done
mkdir -p $I/sass
TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_new timeout 90 build-run/profile/turboprof_new profile \
  --workload llama8b --ctx 128k --types turbo2 --modes 0 --repeat 5 > $I/stats_run.txt 2>&1
python3 bench/sass_dump.py $I/sass $I/cache_new > /dev/null 2>&1
for f in $I/sass/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops.txt 2>&1
grep "decode_tc" $I/stats_run.txt | grep "Register Count" | cut -c1-300 > $I/stats.txt
rm -rf $I/cache_new $I/stats_run.txt
tar czf $OUT/run4.tar.gz -C /tmp s13r4
