#!/usr/bin/env bash
# Session 29, GPU call 3 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=b069712:turboprof,bench_append` on branch split-append-4). A short first look with the
# session's last ~4 minutes of device time: main = split-append-3 with the turbo sides' overlay
# (the new tokens' bits recorded in shared memory as they are quantized, patched into the split's
# first fetch of their tile, stored in the pool after its tile loop; no barrier, no coherent
# view for turbo). Two test_append_decode cases, then bench_append at 4K (turbo3, turbo2), base /
# main. Expected: the tests pass; turbo3 ~3-4% (run2's knock-out 3.1-3.7%), turbo2 alike.
source bench/gpu_prelude.sh
tst app 60 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*'
for l in base main; do
  TKV_BENCH_TYPES=turbo3,turbo2 labeled append.txt "1 $l 4k" $l 40 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
