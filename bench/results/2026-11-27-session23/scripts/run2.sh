#!/usr/bin/env bash
# Session 23, GPU call 2 (the same pack as run1.sh): what call 1 did not reach before its limit
# (its tests took 385 s cold). Fused append-decode, main against branch fused-tail-alias, m 2 and 8
# (call 1 measured m 1 only for the branch: no gain at 128K, where it plans 48 splits in 3 an SM
# against main's 32 in 2), two rounds; bench_append's fused rows (P7's measure) for both; then
# rows16-qrows8 against main at m 3 and 8 (m 1 runs no changed code).
source bench/gpu_prelude.sh
for round in 1 2; do
  for c in main fused; do
    B=$P-$c; [ $c = main ] && B=$P
    for m in 2 8; do
      ctx=4k,32k,128k; [ $m = 8 ] && ctx=4k,32k
      TKV_CACHE_DIR=/tmp/tkv-$c timeout 60 $B timeline --fused --types turbo3,q8_0,f16 --ctx $ctx --m $m --repeat 5 2>&1 |
        grep -E "^(turbo|q8_0|f16|type)|rror" | sed "s/^/$round $c m$m /" >> $R/fused-timeline.txt
    done
    lg "fused timeline r$round $c"
  done
done
for c in main fused; do
  A=build-slim/bench/bench_append-$c; [ $c = main ] && A=build-slim/bench/bench_append
  TKV_CACHE_DIR=/tmp/tkv-$c TKV_BENCH_APPEND_FORMATS=f16 timeout 90 $A --benchmark_filter='fused' 2>&1 |
    grep -E "fused|rror" | sed "s/^/$c /" >> $R/fused-append.txt
  lg "bench_append $c"
done
for bin in main qrows8; do
  B=$P; [ $bin = qrows8 ] && B=$P-qrows8
  TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B timeline --types turbo3,turbo4 --ctx 32k --m 3 --repeat 5 2>&1 |
    grep -E "^(turbo|type)|rror" | sed "s/^/$bin /" >> $R/qrows8-timeline.txt
  lg "qrows8 timeline $bin"
done
for round in 1 2; do
  for bin in main qrows8; do
    B=$P; [ $bin = qrows8 ] && B=$P-qrows8
    for m in 3 8; do
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B profile --types turbo3,turbo2,turbo4 --ctx 8k,32k,128k --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m$m /" >> $R/qrows8-profile.txt
    done
    lg "qrows8 r$round $bin"
  done
done
python3 bench/ab_summary.py $R/qrows8-profile.txt > $R/qrows8-summary.txt 2>&1
cat $R/progress.txt
