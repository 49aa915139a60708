#!/usr/bin/env bash
# Session 15 run 7: the final form of the vec4 partials (final: run 6's vec4 stores, plus the fused
# append's tail storing its partials as vec4s and the merge loading (m, l) as one vec4) against
# base (1f1f7c8) and run 6's vec4. test_decode_tc, test_append_decode and test_timeline of final
# first; then the fused append step (bench_append) of final, then profile rounds.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-base
mkdir -p $OUT/t
(timeout 60 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |PASSED|FAILED"
 for t in test_append_decode test_timeline; do timeout 150 build-slim/tests/$t --gtest_brief=1 2>&1 | tail -3; done) | tee $OUT/t/tests.txt | tail -8
for round in 1 2; do
  for l in base vec4 final; do
    build-ab/turboprof-$l profile --workload llama8b --ctx 1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
timeout 100 build-slim/bench/bench_append 2>&1 | tail -40 > $OUT/t/append.txt
