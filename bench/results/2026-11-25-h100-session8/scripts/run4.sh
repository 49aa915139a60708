#!/bin/bash
# Session 8, run 4: r (5d36671 + the table read of a pair factored into TABLE_PAIR, no change in
# function), v6 (r + the score MMAs ordered by block then token half, so both uses of a query
# fragment sit side by side), v7 (v6 + softcap in one branch and a mask fast path for tiles inside
# every row's range): tests, SASS, A/B (turbo2-4 tc, modes 0 and 1).
set -uo pipefail
source bench/gpu_env.sh build-ab/turboprof-r
for v in r v6 v7; do
  echo "== test_decode_tc-$v"; build-t/test_decode_tc-$v --gtest_brief=1 2>&1 | tail -3
done > $OUT/tests.txt 2>&1
cat $OUT/tests.txt
mkdir -p /tmp/sass
for v in r v6 v7; do
  C=/tmp/cache-$v; rm -rf $C
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$C build-ab/turboprof-$v profile --workload llama8b --ctx 128k --types turbo3 --modes 0 --repeat 3 2>&1 | grep -o "built pipeline decode.*" | cut -c1-300 > /tmp/sass/$v-stats.txt
  python3 bench/sass_dump.py /tmp/sass/$v $C > /tmp/sass/$v-index.txt 2>&1
  for f in /tmp/sass/$v/*.bin; do nvdisasm -b SM90 $f > $f.txt 2>/dev/null; done
done
tar czf $OUT/sass.tar.gz -C /tmp sass
for round in 1 2; do
  for v in r v6 v7; do
    build-ab/turboprof-$v profile --workload llama8b --ctx 1k,8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 --repeat 20 2>&1 \
      | grep -E "^(f16|q8_0|turbo)" | awk -v r="$round" -v l="$v" '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt | tee $OUT/ab-summary.txt
