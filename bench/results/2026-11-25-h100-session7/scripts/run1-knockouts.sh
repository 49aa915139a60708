#!/usr/bin/env bash
# session 7 run 1: knock-outs and candidates of the tc kernel at short and long contexts
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh build-ab/turboprof-base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/dev.txt 2>&1
start=$(date +%s)
build-t/test_decode_tc --gtest_brief=1 > $OUT/tc-tests.txt 2>&1; tail -2 $OUT/tc-tests.txt
echo "tests $(( $(date +%s) - start )) s"
for round in 1 2; do
  for l in base kored lazy lazyearly kopro kotab; do
    bin=build-ab/turboprof-$l
    if [ $l = kored ]; then export TKV_KO_NOREDUCE=1; else unset TKV_KO_NOREDUCE; fi
    $bin profile --types turbo3 --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^turbo3" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  for l in base kored; do
    if [ $l = kored ]; then export TKV_KO_NOREDUCE=1; else unset TKV_KO_NOREDUCE; fi
    build-ab/turboprof-base profile --types f16,turbo2,turbo4 --ctx 64,1k,4k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  unset TKV_KO_NOREDUCE
  for l in base lazyearly; do
    build-ab/turboprof-$l profile --types turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0,1 --repeat 20 2>&1 | grep -E "^turbo" \
      | awk -v r=$round -v l=$l-m01 '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt > $OUT/ab-summary.txt
cat $OUT/ab-summary.txt
echo "ab done $(( $(date +%s) - start )) s"
left=$(( 570 - ($(date +%s) - start) ))
TKV_LARGE_CONTEXTS=1 timeout $left build-t/test_decode --gtest_filter='*LargeContexts*' > $OUT/large.txt 2>&1; echo "large rc $?"
tail -5 $OUT/large.txt
