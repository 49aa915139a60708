#!/usr/bin/env bash
# Session 50 ran it as prepared in session 49 (copied from its next-run1.sh): outputs in ../run1/.
# Prepared in session 49, not run (about 500 s: four test processes side by side ~300 s).
# split16 (branch exp-split16, patches/split16-not-run.patch):
# the 16-row loop's tables (turbo2, turbo3, turbo4 of 64 entries) split into an entry's hi pairs
# in 32 copies, then its lo pairs in 32, so that each half is a conflict-free 32-bit read straight
# into the B operand register that wants it, instead of one 64-bit (hi, lo) read whose halves take
# ~2 copies a read into the operand pairs (u16's listing: 130 copies, 65 reads a tile). Twice the
# table (turbo3 16 KB), within the 16-row outputs' room: shared memory per workgroup unchanged
# outside fused calls (attention/plan.cpp mirrors it). Not checked on the GPU: lavapipe has no
# cooperative matrices, so test_decode_tc here is the first test of its correctness.
# chains16 (branch exp-chains16, patches/chains16-not-run.patch): the 16-row loop's turbo and f16
# scores in four accumulators, s[2 (kb % 2) + h], summed afterwards: two chains of 12 dependent
# MMAs a token half instead of one of 24 (u16's listing: scores into R0 and R4 alone, each HMMA
# waiting on the one before; its stall sum is 1,482 cycles a tile against 633 instructions, with
# two warps a scheduler at R245). Four score accumulators in the 8-column loop changed nothing
# (tuning log §12, §14, §44: sessions 4, 6, 37), where chains are 8 deep and three warps share a
# scheduler.
# carry [".gl", ".pk"]; pack at main (with session 49's u16, b5bc074):
# bash bench/pack_gpu.sh split16=exp-split16:turboprof,test_decode_tc,test_append_decode chains16=exp-chains16:turboprof,test_decode_tc,test_append_decode
# Prediction, split16: turbo m 8 / m 3 steady path 633 -> ~600 a tile (copies -100, reads +65),
# at 32K -2..-5%, 8K -1..-3%; if the driver still copies (the reads not placed in the operand
# registers), even. Wavefronts unchanged (two 32-bit reads, one each, for one 64-bit read, two).
# chains16: +8 registers (R245 -> ~253: spills, STL in the loop, would make it slower). In u16's
# schedule (`sass_loop.py --list`, the stall field summed along the steady path) a tile's 48 score
# MMAs span ~650 cycles of fixed stalls and its 48 output MMAs (16 accumulators) ~300: dependent
# MMAs sit ~27 cycles apart. Four chains: the scores' span toward ~350, m 8 at 32K -5..-10% (two
# warps a scheduler hide part of it); even if registers spill or the other warp already hid it. The
# branch also splits the wide form's (m 2) turbo and f16 score chain, one of 24 (16 exact) MMAs a
# tile, into two (+4 registers): m 2 turbo at 32K -2..-5% if it bounds that loop.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main split16 chains16; do  # (m 8: the 16-row loop)
  loops $l $l profile --types turbo3 --ctx 32k --m 8 --modes 0 --repeat 2
done
lg loops
suites 300 split16 &
suites 300 chains16 &
wait
AB_FILE=m8.txt rounds 2 "main split16 chains16" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k --m 8 --modes 0 --repeat 20
AB_FILE=m3.txt rounds 1 "main split16 chains16" profile --types turbo3,f16 --ctx 32k --m 3 --modes 0 --repeat 20
AB_FILE=m2.txt rounds 2 "main chains16" profile --types turbo3,turbo2,f16 --ctx 32k --m 2 --modes 0 --repeat 20
report m8.txt m3.txt m2.txt
