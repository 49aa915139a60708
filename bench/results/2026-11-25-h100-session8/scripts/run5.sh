#!/bin/bash
# Session 8, run 5: v8 (v7 = 0766932; + tile offsets in words, so each load's address is one add) and
# v9 (v8 + the finish's inverse rotation in registers: a subgroup per row, shuffles and register
# pairs instead of shared memory and a barrier per level; both kernels) against v7: tests (tc on
# both, the whole decode suite on v9), A/B over every type (plan's variant), modes 0 and 1.
set -uo pipefail
source bench/gpu_env.sh build-ab/turboprof-v7
(for v in v8 v9; do echo "== test_decode_tc-$v"; build-t/test_decode_tc-$v --gtest_brief=1 2>&1 | tail -3; done
 echo "== test_decode-v9"; build-t/test_decode-v9 --gtest_brief=1 2>&1 | tail -3) > $OUT/tests.txt 2>&1
cat $OUT/tests.txt
AB_DIR=build-ab AB_MODES=0,1 AB_ROUNDS=2 AB_ARGS="--ctx 1k,8k,32k,128k" bash bench/gpu_session.sh ab > /dev/null 2>&1
python3 bench/ab_summary.py $OUT/ab.txt | tee $OUT/ab-summary.txt
