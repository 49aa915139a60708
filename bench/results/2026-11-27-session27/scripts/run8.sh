#!/usr/bin/env bash
# Session 27, GPU call 8 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=c78de8e:turboprof` on branch turbo4-neg0-table at its final commit). main = turbo4's
# 128-entry table as the plan's choice (TAB128): taken where it is the only table and the SMs get
# no more tokens each; run7's batch 16 at 8K (three workgroups an SM of 2368 tokens) keeps 64.
# Expected: the tc tests exact; batch 16 8K back to base (~106.5); 32K ~35.3; 128K ~95.
source bench/gpu_prelude.sh
tst tc 150 build-slim/tests/test_decode_tc
for l in base main; do
  rows ab.txt "1 $l m1" $l profile --types turbo4 --ctx 32k,128k --modes 0 --repeat 20
  rows ab.txt "1 $l b16" $l profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
done
lg "ab"
cat $R/progress.txt
grep -v ' type ' $R/ab.txt | awk '{print $1, $2, $3, $4, $6, $7, $8, "splits="$15}' | sort -k3,3 -k4,4 -k6,6 -k2,2 -k1,1
