#!/usr/bin/env bash
# Session 23, GPU call 1 (carry [".gl", ".pk"] from this folder's pack.sh). Three things, in order
# of what a ship needs:
#  1. main's tc tests with the plan's new defaults (session 22 could not run them): test_decode_tc,
#     test_append_decode; the branches' tests; test_decode LargeContexts f16 (m 8 is rows16 now) last.
#  2. fused append-decode, three builds: c1a6180 (the plan without the tail's shared memory), main
#     (0b0c12d's fix), fused (branch fused-tail-alias: the tail's arrays in the tc region).
#     Expected: c1a6180 -> main: m 1 128K and m 2 faster (no second wave); main -> fused: the
#     plain kernel's occupancy back, faster again at m 1 128K / m 2 / m 8 4K; m 1 4K-32K even.
#  3. rows16-qrows8 against main: every subgroup of 8-subgroup rows16 holds 2 query rows.
#     Expected: prologue -0.5..-1 us at m 3 / m 8 turbo, m 1 unchanged.
# Files: progress.txt, tests.txt, fused-timeline.txt, fused-append.txt, qrows8-timeline.txt,
# qrows8-profile.txt, qrows8-summary.txt.
source bench/gpu_prelude.sh
tst() {  # tst LABEL LIMIT COMMAND...: runs a test binary into tests.txt, logs rc and the verdict
  local l=$1 lim=$2; shift 2
  echo "===== $l: $*" >> $R/tests.txt
  timeout $lim "$@" > $R/t.txt 2>&1; local rc=$?
  cat $R/t.txt >> $R/tests.txt; lg "$l rc $rc"
  grep -E "FAILED|Failure|PASSED|large:" $R/t.txt | head -20 >> $R/progress.txt; rm -f $R/t.txt
}
tst test_decode_tc 120 build-slim/tests/test_decode_tc
tst test_append_decode 120 build-slim/tests/test_append_decode
tst test_append_decode-fused 120 build-slim/tests/test_append_decode-fused
tst test_decode_tc-qrows8 100 build-slim/tests/test_decode_tc-qrows8 --gtest_filter='*Sixteen*:*Subgroups*'
for round in 1 2; do
  for c in c1a6180 main fused; do
    B=$P-$c; [ $c = main ] && B=$P
    for m in 1 2 8; do
      ctx=4k,32k,128k; [ $m = 8 ] && ctx=4k,32k
      TKV_CACHE_DIR=/tmp/tkv-$c timeout 60 $B timeline --fused --types turbo3,q8_0,f16 --ctx $ctx --m $m --repeat 5 2>&1 |
        grep -E "^(turbo|q8_0|f16|type)|rror" | sed "s/^/$round $c m$m /" >> $R/fused-timeline.txt
    done
    lg "fused timeline r$round $c"
  done
done
for c in c1a6180 main fused; do
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
    for m in 1 3 8; do
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B profile --types turbo3,turbo2,turbo4 --ctx 8k,32k,128k --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m$m /" >> $R/qrows8-profile.txt
    done
    lg "qrows8 r$round $bin"
  done
done
python3 bench/ab_summary.py $R/qrows8-profile.txt > $R/qrows8-summary.txt 2>&1
TKV_LARGE_CONTEXTS=f16 tst large-f16 80 build-slim/tests/test_decode --gtest_filter='*LargeContexts*'
cat $R/progress.txt
