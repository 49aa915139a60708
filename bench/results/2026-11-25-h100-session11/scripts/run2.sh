# Session 11, run 2: why column tiles did not pay (run 1): pipeline statistics and SASS (registers,
# spills, the tile loop's instruction mix) of the three builds at m = 8, turbo3, 32K; and run 1's
# lost r8 rows again (m = 1, 2, 3, 8). Everything in one tarball.
source bench/gpu_env.sh build-run/profile/turboprof_r8
I=/tmp/s11; rm -rf $I; mkdir -p $I
for r in 4 8 16; do
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_r$r timeout 60 build-run/profile/turboprof_r$r profile \
    --workload llama8b --ctx 32k --types turbo3 --m 8 --modes 0 --repeat 10 > $I/stats_r$r.txt 2>&1
  python3 bench/sass_dump.py $I/sass_r$r $I/cache_r$r > $I/sass_index_r$r.txt 2>&1
  for f in $I/sass_r$r/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ') LDL $(grep -c LDL $f) STL $(grep -c STL $f)"; done > $I/loops_r$r.txt 2>&1
done
for m in 1 2 3 8; do
  timeout 60 build-run/profile/turboprof_r8 profile --workload llama8b --ctx 8k,32k --types turbo2,turbo3,turbo4 --m $m --modes 0 --repeat 20 > $I/prof_r8_m$m.txt 2>&1
done
for r in 16 8; do timeout 90 build-run/tests/test_decode_tc_r$r --gtest_brief=1 > $I/tests_tc_r$r.txt 2>&1; echo "rc $?" >> $I/tests_tc_r$r.txt; done
rm -rf $I/cache_r*
tar czf $OUT/run2.tar.gz -C /tmp s11
