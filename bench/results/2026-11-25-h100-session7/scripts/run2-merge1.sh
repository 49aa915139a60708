#!/usr/bin/env bash
# session 7 run 2: the fused split merge (one dispatch per call): GPU suites, then A/B against HEAD
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh build-ab/turboprof-base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/dev.txt 2>&1
start=$(date +%s)
for t in test_vk_runtime test_plan test_cache test_decode_tc test_decode_modes test_variants_modes test_decode; do
  timeout 120 build-t/$t --gtest_brief=1 2>&1 | tail -4 | sed "s/^/$t: /"
done > $OUT/tests.txt 2>&1
grep -E "PASSED|FAILED|rror" $OUT/tests.txt | head -20
echo "tests $(( $(date +%s) - start )) s"
for round in 1 2; do
  for l in base fused; do
    build-ab/turboprof-$l profile --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
for l in base fused; do
  build-ab/turboprof-$l sweep --ctx 1k,4k --types f16,turbo3 --repeat 10 2>&1 | grep -E "^(f16|turbo3)" | sed "s/^/$l /"
done > $OUT/step.txt 2>&1
python3 bench/ab_summary.py $OUT/ab.txt > $OUT/ab-summary.txt
cat $OUT/ab-summary.txt; cat $OUT/step.txt
echo "done $(( $(date +%s) - start )) s"
