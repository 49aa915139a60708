#!/bin/bash
# Session 8, run 3: v5 = v3 + the decode pipelines without the driver's bounds checks
# (VK_EXT_pipeline_robustness, PipelineKey::bounds_checks) against base and v3: tests (tc and the
# whole decode suite on v5), SASS of the turbo3 tc loop, A/B over every type (plan's variant) and
# modes 0, 1.
set -uo pipefail
source bench/gpu_env.sh build-ab/turboprof-base
(echo "== test_decode_tc-v5"; build-t/test_decode_tc-v5 --gtest_brief=1 2>&1 | tail -3
 echo "== test_decode-v5"; build-t/test_decode-v5 --gtest_brief=1 2>&1 | tail -3) > $OUT/tests.txt 2>&1
cat $OUT/tests.txt
mkdir -p /tmp/sass
for v in v5; do
  C=/tmp/cache-$v; rm -rf $C
  TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$C build-ab/turboprof-$v profile --workload llama8b --ctx 128k --types turbo3,f16 --modes 0 --repeat 3 2>&1 | grep -o "built pipeline decode.*" | cut -c1-300 > /tmp/sass/$v-stats.txt
  python3 bench/sass_dump.py /tmp/sass/$v $C > /tmp/sass/$v-index.txt 2>&1
  for f in /tmp/sass/$v/*.bin; do nvdisasm -b SM90 $f > $f.txt 2>/dev/null; done
done
tar czf $OUT/sass.tar.gz -C /tmp sass
for round in 1 2; do
  for v in base v3 v5; do
    build-ab/turboprof-$v profile --workload llama8b --ctx 1k,8k,32k,128k --modes 0,1 --repeat 20 2>&1 \
      | grep -E "^(f16|q8_0|turbo)" | awk -v r="$round" -v l="$v" '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/ab.txt
python3 bench/ab_summary.py $OUT/ab.txt | tee $OUT/ab-summary.txt
