#!/usr/bin/env bash
# Prepared for the next GPU session (branch tc-rows16-8sg; not run in session 21: no device time
# left). Pack with scripts/pack.sh on the branch, carry [".gl", ".pk"].
# rows16 in workgroups of 8 subgroups (TKV_SUBGROUPS=8: one an SM, as many warps as two of 4, half
# the splits) against 4. Session 21's timeline (run 1) put rows16's fixed parts at m 3 32K at ~13
# us (prologue 4.5, arrival 4.9, merge of 33 splits x 12 rows 4.7) beside 25.7 us of tiles.
# Expected: arrival and merge about halved (16 splits), the prologue about the same: turbo3 32K
# m 3 45.4 -> ~41-42 us, m 8 66.8 -> ~62; 8K worse (splits of 4-8 steps). If it wins where the
# splits are long, a plan rule like session 20's six subgroups.
source bench/gpu_prelude.sh  # (the preamble it ran with, in one place since)
timeout 150 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
for m in 3 8; do
  for sg in 4 8; do
    TKV_SUBGROUPS=$sg TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 90 $P timeline --types turbo3,q8_0 --ctx 32k --m $m --repeat 5 > $R/timeline-m$m-sg$sg.txt 2>&1
    lg "timeline m$m sg$sg rc $?"
  done
done
for round in 1 2; do
  for sg in 4 8; do
    for m in 3 8; do
      TKV_SUBGROUPS=$sg timeout 60 $P profile --types turbo3,turbo2,turbo4,q8_0 --ctx 8k,32k,128k --m $m \
        --modes 0 --repeat 10 2>&1 | grep -E '^(turbo|q8_0)|rror' | sed "s/^/$round sg$sg-m$m /" >> $R/profile.txt
      lg "r$round sg$sg m$m"
    done
  done
done
# m 2 (8 rows) on the MMAs' 16-row side against the wide columns: session 21's prep run measured
# 34.7 -> 53.9 us for turbo3 32K while rows16 ran one workgroup an SM (8 rows: 26.8 KB then, 14.3
# KB now); half its MMA rows idle, so expected still slower, but by how much is open.
for round in 1 2; do
  for r in 0 1; do
    TKV_ROWS16=$r timeout 60 $P profile --types turbo3,q8_0 --ctx 8k,32k --m 2 --modes 0 --repeat 10 2>&1 |
      grep -E '^(turbo|q8_0)|rror' | sed "s/^/$round r$r-m2 /" >> $R/profile.txt
    lg "r$round rows16=$r m2"
  done
done
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/progress.txt; grep -hE "^turbo|^q8_0|^type" $R/timeline-*.txt
grep -h "Shared Memory" $R/timeline-*.txt | grep -o "constants \[[0-9,]*\].*Register Count = [0-9]*\|Shared Memory Size = [0-9]*" | paste - - | sort -u
cat $R/summary.txt
