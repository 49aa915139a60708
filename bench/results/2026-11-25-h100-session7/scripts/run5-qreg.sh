#!/usr/bin/env bash
# session 7 run 5: the tc query prologue in registers (shuffle Hadamard) against HEAD
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh
start=$(date +%s)
for t in test_decode_tc test_decode; do
  timeout 240 build-t/$t --gtest_brief=1 > /tmp/$t.txt 2>&1; rc=$?
  echo "$t rc $rc at $(( $(date +%s) - start )) s"; grep -E "Failure|error|PASSED|FAILED" /tmp/$t.txt | head -8
done 2>&1 | tee $OUT/tests.txt
for round in 1 2; do
  for l in base qreg; do
    build-ab/turboprof-$l profile --types turbo2,turbo3,turbo4 --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt > $OUT/ab-summary.txt
cat $OUT/ab-summary.txt
echo "done $(( $(date +%s) - start )) s"
