#!/usr/bin/env bash
# session 7 run 3: the merge tail (online, 16 splits per round trip) against HEAD and the first fused build; LargeContexts
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh build-ab/turboprof-base
start=$(date +%s)
build-t/test_decode_tc --gtest_brief=1 2>&1 | tail -2
for round in 1 2; do
  for l in base fused2 nocoh; do
    build-ab/turboprof-$l profile --types f16,q8_0,turbo3 --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt > $OUT/ab-summary.txt
cat $OUT/ab-summary.txt
echo "ab done $(( $(date +%s) - start )) s"
left=$(( 575 - ($(date +%s) - start) ))
TKV_LARGE_CONTEXTS=1 timeout $left build-t/test_decode --gtest_filter='*LargeContexts*' > $OUT/large.txt 2>&1; echo "large rc $? at $(( $(date +%s) - start )) s"
tail -8 $OUT/large.txt
