#!/usr/bin/env bash
# Session 24, GPU call 2 (carry [".gl", ".pk"] from `bash bench/pack_gpu.sh` at the merge of
# merge-batch17 and tail-copies): the P1-P8 table of the merge (P7 expected from ~8% to ~2-3%:
# a fused m 1 call lost its third merge batch, -0.8 us of the ~1 us a layer it cost over plain),
# the merged tc tests (filtered: a cold machine compiles every pipeline), then probes for P2 and
# P6b: turbo3 m 1 32K mode 0 / mode 1 at other subgroup and split counts (the plan's 6 x 32 is
# 1.13x); m 3 32K with rows16 off, or in 8 subgroups (q8_0 is 1.23x m 2 at the plan's 4).
source bench/gpu_prelude.sh
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout 330 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt; rm -rf $R/t
tst tc 100 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
tst append 120 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
# P2: each setting's mode 0 and mode 1 (profile prints both).
for s in "" "TKV_SUBGROUPS=4" "TKV_SUBGROUPS=8" "TKV_SPLITS=24" "TKV_SPLITS=48" "TKV_SUBGROUPS=4 TKV_SPLITS=48" "TKV_SUBGROUPS=8 TKV_SPLITS=16"; do
  env $s TKV_CACHE_DIR=/tmp/tkv-p2 timeout 40 $P profile --types turbo3 --ctx 32k --m 1 --modes 0,1 --repeat 20 2>&1 |
    grep -E "^(turbo|type)|rror" | sed "s/^/p2 [${s:-plan}] /" >> $R/probes.txt
done
lg "p2 probes"
for s in "" "TKV_ROWS16=0" "TKV_SUBGROUPS=8" "TKV_SPLITS=16"; do
  env $s TKV_CACHE_DIR=/tmp/tkv-p6 timeout 40 $P profile --types q8_0,turbo4,turbo3 --ctx 32k --m 3 --modes 0 --repeat 20 2>&1 |
    grep -E "^(turbo|q8_0|type)|rror" | sed "s/^/p6b m3 [${s:-plan}] /" >> $R/probes.txt
done
TKV_CACHE_DIR=/tmp/tkv-p6 timeout 40 $P profile --types q8_0,turbo4,turbo3 --ctx 32k --m 2 --modes 0 --repeat 20 2>&1 |
  grep -E "^(turbo|q8_0|type)|rror" | sed "s/^/p6b m2 [plan] /" >> $R/probes.txt
lg "p6b probes"
cat $R/progress.txt; sed -n '/^target/,/targets met/p' $R/targets.txt | grep -v "^  "; cat $R/probes.txt
