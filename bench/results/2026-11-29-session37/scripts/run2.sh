#!/usr/bin/env bash
# Session 37, run 2. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh
#   skew=exp-skew:turboprof,test_decode_tc nosc=exp-skew-nosc:turboprof acc4=exp-skew-acc4:turboprof,test_decode_tc
# Question: is the turbo tile loop latency-bound for want of independent work in its blocks? Run 1's
# machine code, per path: a steady tile executes 569 of turbo3's 710 instructions (486 / 790 for
# turbo2 / turbo4), so the calls run at ~0.50 of the issue rate, with 3 warps a scheduler. The
# driver schedules each basic block on its own; the scores and the output are in different blocks,
# with the softmax's branches between. skew: a tile's scores at the end of the step before, in
# the output MMAs' block. nosc: skew without the softcap branch (price of that block boundary; not
# shippable as is). acc4: skew with two accumulator chains a token half (4 dependent score MMAs
# instead of 8). m2 rows: turbo3 at m 2 (8 rows: the WIDE form, also skewed). Prediction: skew -5..-15% at 32K-128K if latency is the limit; acc4 a few % more.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for l in main skew nosc acc4; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
    rows ab.txt "$rep $l-m2" "$l" profile --types turbo3 --ctx 32k --m 2 --modes 0 --repeat 20
  done
done
lg ab
for l in skew nosc acc4; do sass "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; rm -f $R/sass-$l.txt; done
lg sass
tst tc-skew 150 build-slim/tests/test_decode_tc-skew --gtest_filter=-*Khr*
cat $R/progress.txt $R/device.txt
python3 bench/ab_summary.py $R/ab.txt 2>/dev/null || cat $R/ab.txt
bundle ab.txt device.txt tests.txt sass-skew.tar.gz sass-nosc.tar.gz sass-acc4.tar.gz
