# Session 14, run 1: session 13's run 2 again (its results were lost with that session): the tile's
# words in chunks of 4/2/1 per lane side by side (TileLayout::word_index), so the tc kernel loads a
# tile with 128/64-bit loads (turbo3: 14 LDG per tile -> 6), against base = 35f755e (KHR default).
# Correctness suites on the new layout, modes 0 and 1 at 8K/32K/128K (two rounds alternating),
# short contexts, m 8 at 32K, batch 16 at 8K, the loops' SASS.
B=build-slim
source bench/gpu_env.sh $B/profile/turboprof_new
I=/tmp/s14r1; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
for t in test_decode_tc test_cache; do
  timeout 120 $B/tests/$t --gtest_brief=1 > $I/tests_$t.txt 2>&1; echo "rc $?" >> $I/tests_$t.txt
done
P() { v=$1; shift; TKV_CACHE_DIR=/tmp/cache_$v timeout 90 $B/profile/turboprof_$v profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  for v in base new; do
    P $v --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_${v}_round$round.txt 2>&1
  done
done
for v in base new; do
  P $v --ctx 1k,4k --types turbo3,q8_0,f16 --modes 0 > $I/short_$v.txt 2>&1
  P $v --ctx 32k --types turbo2,turbo3,turbo4 --m 8 --modes 0 > $I/m8_$v.txt 2>&1
  P $v --ctx 8k --types turbo2,turbo3,turbo4,q8_0 --batch 16 --modes 0 > $I/b16_$v.txt 2>&1
done
mkdir -p $I/sass
TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_new timeout 60 $B/profile/turboprof_new profile \
  --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run.txt 2>&1
python3 bench/sass_dump.py $I/sass $I/cache_new > /dev/null 2>&1
for f in $I/sass/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops.txt 2>&1
grep "decode_tc" $I/stats_run.txt | grep "Register Count" | cut -c1-300 > $I/stats.txt
rm -rf $I/cache_new $I/stats_run.txt $I/sass
tar czf $OUT/run1.tar.gz -C /tmp s14r1
for t in test_append_decode test_decode; do
  timeout 100 $B/tests/$t --gtest_brief=1 > $I/tests_$t.txt 2>&1; echo "rc $?" >> $I/tests_$t.txt
done
tar czf $OUT/run1b.tar.gz -C /tmp s14r1
tail -3 $I/tests_*.txt; grep -h "^turbo" $I/m1_*_round2.txt | head -40
