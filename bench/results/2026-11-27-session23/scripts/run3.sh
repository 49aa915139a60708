#!/usr/bin/env bash
# Session 23, GPU call 3 (carry [".gl", ".pk"] from bench/pack_gpu.sh at the merge of both
# branches): the P1-P8 table of the commit to ship first, then its tc tests (test_decode_tc's
# rows16 / subgroup / fused-region cases, test_append_decode in full: the fused tc kernel with its
# tail's arrays in the region, and 8-subgroup rows16 with 2 query rows a subgroup), then the
# fused timeline at m 8 4K-8K (the branch's one loss in call 2).
source bench/gpu_prelude.sh
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout 330 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt; rm -rf $R/t
for t in "test_decode_tc --gtest_filter=*Sixteen*:*Subgroups*:*Rows*" "test_append_decode"; do
  set -- $t
  timeout 170 build-slim/tests/$1 ${2:-} > $R/$1.txt 2>&1; lg "$t rc $?"
  grep -E "FAILED|Failure|PASSED" $R/$1.txt | head -20 >> $R/progress.txt
done
TKV_CACHE_DIR=/tmp/tkv-f timeout 40 $P timeline --fused --types turbo3,q8_0,f16 --ctx 4k,8k --m 8 --repeat 5 > $R/fused-m8.txt 2>&1
lg "fused m8 rc $?"
# m 8 at 4K: the plan drops rows16 for short splits (4 chunks of 8 rows); call 2's fused loss says
# rows16 in 8 subgroups may win there. Default against forced, fused and plain, two rounds.
TKV_ROWS16=1 TKV_SUBGROUPS=8 TKV_CACHE_DIR=/tmp/tkv-f timeout 40 $P timeline --fused --types turbo3,turbo4 --ctx 4k,8k --m 8 --repeat 5 2>&1 | sed 's/^/forced /' >> $R/fused-m8.txt
for round in 1 2; do
  for v in default forced; do
    e=(); [ $v = forced ] && e=(TKV_ROWS16=1 TKV_SUBGROUPS=8)
    env "${e[@]}" TKV_CACHE_DIR=/tmp/tkv-f timeout 40 $P profile --types turbo3,turbo2,turbo4 --ctx 4k,8k --m 8 --modes 0 --repeat 10 2>&1 |
      grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $v /" >> $R/m8-profile.txt
  done
done
python3 bench/ab_summary.py $R/m8-profile.txt > $R/m8-summary.txt 2>&1; lg "m8 profile"
cat $R/progress.txt $R/m8-summary.txt; sed -n '/^target/,/targets met/p' $R/targets.txt | grep -v "^  "
