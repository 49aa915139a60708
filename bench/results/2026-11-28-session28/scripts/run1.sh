#!/usr/bin/env bash
# Session 28, GPU call 1 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=c78de8e:turboprof` on main b069712). Session 27's run8 (the final tab128 rule: turbo4's
# 128-entry table where it is the only one and the SMs get no more tokens each), then a targets
# table of main.
# Expected: the tc tests exact; batch 16 8K back to base (~106.5); 32K ~35.3; 128K ~95.
source bench/gpu_prelude.sh
tst tc 150 build-slim/tests/test_decode_tc
for l in base main; do
  rows ab.txt "1 $l m1" $l profile --types turbo4 --ctx 32k,128k --modes 0 --repeat 20
  rows ab.txt "1 $l b16" $l profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
done
lg "ab"
grep -v ' type ' $R/ab.txt | awk '{print $1, $2, $3, $4, $6, $7, $8, "splits="$15}' | sort -k3,3 -k4,4 -k6,6 -k2,2 -k1,1
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_TARGETS_BUDGET=420 TKV_BUILD=build-slim OUT=$R/t timeout 432 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt 2>/dev/null
(cd $R/t && tar czf $R/targets-inputs.tar.gz ./*.json 2>/dev/null); rm -rf $R/t
cat $R/progress.txt
sed -n '/^target/,/targets met/p' $R/targets.txt
