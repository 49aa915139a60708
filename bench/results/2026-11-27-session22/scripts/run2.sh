#!/usr/bin/env bash
# Session 22, run 2 (carry [".gl", ".pk"] from pack-ab.sh: build-slim from the osh swizzle, and
# turboprof-base from 7867ec0 without it). osh's rows of DIM floats put a warp's 8 rows g on one
# bank (scripts/banks.py's model, in the README): rows16's fold 8-way (turbo, q8_0) and 32-way
# (f16 rows) conflicts, the columns' epilogue 2-way (wide 4, f16 rows 8-16). Expected: rows16's
# arrival (turbo3 m 3 32K 4.9 us, f16 11.5) down by ~3 us (f16 ~9); m 1 about the same (32 stores
# a lane at 2-way); f16 rows16 m 3 71 -> ~62 us (the columns: 64).
# Then the tests of every tc form, and the P1-P8 targets with what time is left.
source bench/gpu_prelude.sh  # (the preamble it ran with, in one place since)
timeout 100 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*:*Wide*:EveryTurboPair*:RowTypes*:*Subgroups*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
timeout 60 build-slim/tests/test_append_decode --gtest_filter='*Sixteen*:*TailEdges*' > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_append_decode.txt | head -20 >> $R/progress.txt
for round in 1 2; do
  for bin in base new; do
    B=$P; [ $bin = base ] && B=$P-base
    for m in 1 3 8; do
      ctx=32k; [ $m = 1 ] && ctx=8k,32k
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B profile --types turbo3,q8_0,f16 --ctx $ctx --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m$m /" >> $R/profile.txt
    done
    TKV_CACHE_DIR=/tmp/tkv-$bin TKV_ROWS16=1 timeout 30 $B profile --types f16 --ctx 32k --m 3 --modes 0 --repeat 10 2>&1 |
      grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-r16m3 /" >> $R/profile.txt
    lg "r$round $bin"
  done
done
TKV_CACHE_DIR=/tmp/tkv-new timeout 40 $P timeline --types turbo3,q8_0 --ctx 32k --m 3 --repeat 5 > $R/timeline-m3.txt 2>&1; lg "timeline m3 rc $?"
TKV_CACHE_DIR=/tmp/tkv-new TKV_ROWS16=1 timeout 30 $P timeline --types f16 --ctx 32k --m 3 --repeat 5 > $R/timeline-f16-m3.txt 2>&1; lg "timeline f16 rc $?"
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/summary.txt; grep -hE "^(turbo|q8_0|f16|type)" $R/timeline-*.txt
left=$((570 - (SECONDS - T0)))
lg "targets with ${left}s"
TKV_CACHE_DIR=/tmp/tkv-new TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout $left bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cat $R/progress.txt; sed -n '/^target/,/targets met/p' $R/t/targets.txt 2>/dev/null | grep -v "^  "
