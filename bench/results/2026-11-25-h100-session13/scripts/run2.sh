# Session 13, run 2: the tile's words in chunks of 4/2/1 per lane side by side (TileLayout::word_index),
# so the tc kernel loads a tile with 128/64-bit loads (turbo3: 14 LDG per tile -> 6) against the
# same commit before it (base = 35f755e, KHR default): correctness suites on the new layout, modes
# 0 and 1 at 8K/32K/128K two rounds alternating, m 8 at 32K, batch 16 at 8K, the loops' SASS.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s13r2; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
for t in test_decode_tc test_cache test_append_decode test_decode; do
  timeout 200 build-run/tests/$t --gtest_brief=1 > $I/tests_$t.txt 2>&1; echo "rc $?" >> $I/tests_$t.txt
done
P() { v=$1; shift; TKV_CACHE_DIR=/tmp/cache_$v timeout 90 build-run/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in base new; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in base new; do
  P $v --ctx 32k --types turbo2,turbo3,turbo4 --m 8 --modes 0 > $I/m8_$v.txt 2>&1
  P $v --ctx 8k --types turbo2,turbo3,turbo4 --batch 16 --modes 0 > $I/b16_$v.txt 2>&1
done
mkdir -p $I/sass
TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_new timeout 90 build-run/profile/turboprof_new profile \
  --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run.txt 2>&1
python3 bench/sass_dump.py $I/sass $I/cache_new > /dev/null 2>&1
for f in $I/sass/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops.txt 2>&1
grep "decode_tc" $I/stats_run.txt | grep "Register Count" | cut -c1-300 > $I/stats.txt
rm -rf $I/cache_new $I/stats_run.txt
tar czf $OUT/run2.tar.gz -C /tmp s13r2
