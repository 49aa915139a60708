#!/usr/bin/env bash
# Session 22, run 3 (carry [".gl", ".pk"] from pack-ab.sh; base = 7867ec0): run 2's swizzle kept for
# rows16 over f16 V only (where it cut the fold's arrival 11.5 -> 6.1 us), and the plan's rows16
# for f16 pairs too (off unasked before). Expected against base: m 1 turbo3 / q8_0 as base (run 2's
# loss gone: no swizzle outside f16 V rows16); m 8 f16 99 -> ~80, f16 / turbo3 95 -> ~69, q8_0 /
# f16 99 -> ~83; m 3 f16 / turbo3 59 -> ~51, f16 64.5 -> ~65.8 (even), q8_0 / f16 62.7 -> ~60.
source bench/gpu_prelude.sh  # (the preamble it ran with, in one place since)
timeout 50 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*:RowTypes*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
for round in 1 2; do
  for bin in base new; do
    B=$P; [ $bin = base ] && B=$P-base
    TKV_CACHE_DIR=/tmp/tkv-$bin timeout 25 $B profile --types turbo3,q8_0 --ctx 8k,32k --m 1 --modes 0 --repeat 10 2>&1 |
      grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m1 /" >> $R/profile.txt
    for m in 3 8; do
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 25 $B profile --types f16,f16/turbo3,q8_0/f16 --ctx 32k --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m$m /" >> $R/profile.txt
    done
    lg "r$round $bin"
  done
done
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/progress.txt $R/summary.txt
