#!/usr/bin/env bash
# Session 21, run 2 (branch tc-rows16 with the folded osh and Q staged in halves, carry [".gl", ".pk"] from pack.sh):
# rows16's tests, then rows16 against the columns at m 3 and m 8 (and the timeline: whether the
# second wave of workgroups is gone). Expected (turbo3 32K): m 3 58.8 -> ~37 us (columns 51.2),
# m 8 (run 1: 93.3 against the columns 88.3, 16 rows at 27.2 KB: one workgroup an SM) -> ~60-70.
source bench/gpu_prelude.sh  # (the preamble it ran with, in one place since)
timeout 150 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*:*Wide*:*Exact*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
for m in 8; do
  for r in 0 1; do
    TKV_ROWS16=$r TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 90 $P timeline --types turbo3,q8_0 --ctx 32k --m $m --repeat 5 > $R/timeline-m$m-r$r.txt 2>&1
    lg "timeline m$m rows16=$r rc $?"
  done
done
for round in 1 2; do
  for r in 0 auto; do
    for m in 8; do
      env $([ $r = 0 ] && echo TKV_ROWS16=0) timeout 60 $P profile --types turbo3,turbo2,turbo4,q8_0 --ctx 8k,32k --m $m \
        --modes 0 --repeat 10 2>&1 | grep -E '^(turbo|q8_0)|rror' | sed "s/^/$round r$r-m$m /" >> $R/profile.txt
      lg "r$round rows16=$r m$m"
    done
  done
done
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/progress.txt; grep -hE "^turbo|^q8_0|^type" $R/timeline-*.txt; grep -h "Shared Memory" $R/timeline-*.txt | grep -o "constants \[[0-9,]*\].*Register Count = [0-9]*\|Shared Memory Size = [0-9]*" | paste - - | sort -u | head -20; cat $R/summary.txt
