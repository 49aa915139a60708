#!/usr/bin/env bash
# Session 39, run 2. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh t256=exp-t256:turboprof,test_decode_tc
# turbo4's 16 KB table (TAB128: 128 entries x 16 copies, its second negative bit applied by a
# shift, a mask and two xors a pair) as 256 entries x 8 copies: both negative bits in the table,
# no sign work, at the same shared memory (so the same plans); a half-warp's 64-bit reads then
# meet 2-way bank conflicts (lanes l and l + 8 share a copy). Run 1's SASS count of turbo4's sign
# work: 32 shifts, ~80 masks, ~96 xors of its 790 steady instructions, ~400 of its ~1500 cycles a
# tile at the ALU's ~1.9. Prediction: turbo4 128K 94.7 -> 75-80 us if the conflicts cost little;
# no change where the plan takes the 64-entry table (batch 16).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst t256 240 build-slim/tests/test_decode_tc-t256 --gtest_filter=-*KhrRewriteOfTheEmbeddedShaders*
rows check.txt t256 t256 check --types turbo4,turbo4/q8_0,q8_0/turbo4 --ctx 4k
lg check
for l in main t256; do loops "$l" "$l" profile --types turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
grep -E "^== |steady path:|^MOV|^LOP3|issue floor" $R/loops.txt
rounds 2 "main t256" profile --types turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
for rep in 1 2; do for l in main t256; do
  rows m8.txt "$rep $l" "$l" profile --types turbo4 --ctx 32k --m 8 --modes 0 --repeat 20
  rows b16.txt "$rep $l" "$l" profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
done; done
lg "m8 b16"
cat $R/progress.txt $R/device.txt
grep -E "^t256 (turbo|q8)" $R/check.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
echo "m = 8:"; python3 bench/ab_summary.py $R/m8.txt
echo "batch 16:"; python3 bench/ab_summary.py $R/b16.txt
bundle ab.txt loops.txt check.txt tests.txt
