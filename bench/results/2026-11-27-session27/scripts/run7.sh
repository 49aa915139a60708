#!/usr/bin/env bash
# Session 27, GPU call 7 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=c78de8e:turboprof,bench_append` on branch turbo4-neg0-table at its final commit). main =
# run6's change where turbo4's table is the only one (turbo4 pairs, turbo4 beside f16 / q8_0);
# beside another turbo type the 64-entry table as before. base = main c78de8e.
# Expected: the tc tests exact; turbo4 as run6 (8K / 32K / 128K ~17.9 / 35.5 / 94.7); turbo4 /
# turbo3 and turbo3 / turbo4 even with base; turbo4 m 2 / m 8 / batch 16 faster; the fused
# turbo4 step (bench_append) faster, its P7 ratio about the same.
source bench/gpu_prelude.sh
tst tc 200 build-slim/tests/test_decode_tc
tst app 150 build-slim/tests/test_append_decode --gtest_filter='*EveryTypeAndShape*:*Sixteen*:*TailEdges*'
for l in base main; do
  rows ab.txt "1 $l m1" $l profile --types turbo4 --ctx 8k,32k,64k,128k --modes 0 --repeat 20
  rows ab.txt "1 $l pairs" $l profile --types turbo4/turbo3,turbo3/turbo4,turbo4/f16,q8_0/turbo4 --ctx 32k --modes 0 --repeat 20
  rows ab.txt "1 $l m2" $l profile --types turbo4 --ctx 32k --m 2 --modes 0 --repeat 20
  rows ab.txt "1 $l m8" $l profile --types turbo4 --ctx 32k --m 8 --modes 0 --repeat 20
  rows ab.txt "1 $l b16" $l profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
  TKV_BENCH_TYPES=turbo4 labeled append.txt "1 $l" $l 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
lg "ab"
cat $R/progress.txt
grep -v ' type ' $R/ab.txt | awk '{print $1, $2, $3, $4, $6, $7, $8, "splits="$15}' | sort -k3,3 -k4,4 -k6,6 -k2,2 -k1,1
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, d, f, r}' $R/append.txt
