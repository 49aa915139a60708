#!/usr/bin/env bash
# Session 22, run 1 (main with the eight-subgroup rows16 rule, carry [".gl", ".pk"] from pack.sh):
# the GPU tests of rows16 (now eight subgroups for turbo pairs, in the plain and the fused call),
# test_decode LargeContexts turbo3 (m 8 takes them), then what the rule leaves unmeasured:
# mixed turbo / q8_0 pairs at four and eight subgroups, and f16 rows on the 16-row side (off
# unasked since session 21, when rows16 still ran one workgroup an SM).
# Expected: mixed pairs between turbo3's gain (-5%) and q8_0's loss (+4-9%); f16 rows16 at two
# workgroups an SM near q8_0's rows16 gain (m 3 32K 64.8 -> ~55?), if its 64 tile-word registers
# do not spill.
source bench/gpu_prelude.sh  # (the preamble it ran with, in one place since)
timeout 100 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
timeout 100 build-slim/tests/test_append_decode --gtest_filter='*Sixteen*' > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_append_decode.txt | head -20 >> $R/progress.txt
TKV_LARGE_CONTEXTS=turbo3 timeout 70 build-slim/tests/test_decode --gtest_filter='*LargeContexts*' > $R/large-turbo3.txt 2>&1
lg "LargeContexts turbo3 rc $?"; grep -E "large:|FAILED|PASSED" $R/large-turbo3.txt >> $R/progress.txt
for round in 1 2; do
  for sg in 4 8; do
    for m in 3 8; do
      TKV_SUBGROUPS=$sg timeout 60 $P profile --types turbo3/q8_0,q8_0/turbo3,turbo4/q8_0 --ctx 32k,128k --m $m \
        --modes 0 --repeat 10 2>&1 | grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round sg$sg-m$m /" >> $R/profile.txt
      lg "r$round sg$sg m$m"
    done
  done
  for cfg in "0 4" "1 4" "1 8"; do
    set -- $cfg
    for m in 3 8; do
      TKV_ROWS16=$1 TKV_SUBGROUPS=$2 timeout 60 $P profile --types f16,q8_0/f16,f16/turbo3 --ctx 32k --m $m \
        --modes 0 --repeat 10 2>&1 | grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round r$1sg$2-m$m /" >> $R/profile.txt
      lg "r$round f16 rows16=$1 sg$2 m$m"
    done
  done
done
TKV_ROWS16=1 TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 $P timeline --types f16 --ctx 32k --m 3 --repeat 5 > $R/timeline-f16-m3.txt 2>&1
lg "timeline f16 rows16 rc $?"
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/progress.txt; grep -hE "^f16|^type" $R/timeline-*.txt
grep -h "Shared Memory" $R/timeline-*.txt | grep -o "constants \[[0-9,]*\].*Register Count = [0-9]*\|Shared Memory Size = [0-9]*" | paste - - | sort -u
cat $R/summary.txt
