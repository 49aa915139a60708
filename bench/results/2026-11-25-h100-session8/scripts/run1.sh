#!/bin/bash
# Session 8, run 1: tc variants v1 (score-phase A fragments with hi/lo rows) and v2 (v1 + the
# rescale's multiply outside the branch) against base (a93b0e0 + B-fragment probe): tests, SASS
# instruction counts of the turbo3 tc loop, and A/B timings (turbo2-4, tc, modes 0 and 1).
set -uo pipefail
source bench/gpu_env.sh build-ab/turboprof-base
for v in v1 v2; do
  echo "== test_decode_tc-$v"; build-t/test_decode_tc-$v --gtest_brief=1 2>&1 | tail -4
done > $OUT/tests.txt 2>&1
cat $OUT/tests.txt
mkdir -p /tmp/sass
for v in base v1 v2; do
  C=/tmp/cache-$v; rm -rf $C
  TKV_CACHE_DIR=$C build-ab/turboprof-$v profile --workload llama8b --ctx 128k --types turbo3 --variants tc --modes 0 --repeat 3 >/dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sass/$v $C > /tmp/sass/$v-index.txt 2>&1
  for f in /tmp/sass/$v/*.bin; do nvdisasm -b SM90 $f > $f.txt 2>/dev/null; done
done
tar czf $OUT/sass.tar.gz -C /tmp sass
for round in 1 2; do
  for v in base v1 v2; do
    build-ab/turboprof-$v profile --workload llama8b --ctx 1k,8k,32k,128k --types turbo2,turbo3,turbo4 --variants tc --modes 0,1 --repeat 20 2>&1 \
      | grep -E "^(f16|q8_0|turbo)" | awk -v r="$round" -v l="$v" '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt | tee $OUT/ab-summary.txt
