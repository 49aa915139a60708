#!/usr/bin/env bash
# Prepared in session 51, not run (~330 s): x32 (branch exp-x32; else git checkout -b exp-x32
# main && git apply bench/results/2026-12-03-session51/patches/x32-not-run.patch && git commit
# -qam x32): an exact type's A fragment (turbo2's K and V in the 8-column loop, one row and the
# wide form) from four 32-bit table reads of each entry's hi pair, not four 64-bit reads of
# (hi, lo) whose lo is zero and dead. Session 50 run 2 / session 51 run 1: a 64-bit read's result
# lands in a register pair and four copies build the operand's quad; a 32-bit read may land in
# the quad itself. (Session 50's split16, 32-bit halves of a (hi, lo) table, doubled the reads:
# here the read count stays.) turbo2 is P1's and P8's worst type (3.08x, 3.29x).
# Prediction: turbo2's steady path loses up to 8 copies a 16-dim block on each side (up to 128 a
# two-tile iteration); turbo2 128K 60.7 -> ~58-59 us (-2..-4%) if the loop issue-bound as turbo3's
# was (k8: -6% instructions, -1..-2% time: so maybe only -1%); +0..1% if the driver copies anyway.
# carry [".gl", ".pk"]; pack at main (with next-run1.sh's label, one pack for both):
# bash bench/pack_gpu.sh vd=exp-vdepth:turboprof,bench_append,test_decode_tc,test_append_decode x32=exp-x32:turboprof,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
loops main main profile --types turbo2 --ctx 32k --modes 0 --repeat 2
loops x32 x32 profile --types turbo2 --ctx 32k --modes 0 --repeat 2
lg loops
suites 250 x32
if passed tc-x32 && passed app-x32; then
  AB_FILE=x32.txt rounds 2 "main x32" profile --types turbo2 --ctx 8k,32k,128k --modes 0 --repeat 20
  AB_FILE=x32m2.txt rounds 2 "main x32" profile --types turbo2 --ctx 32k --m 2 --modes 0 --repeat 20
fi
report x32.txt x32m2.txt
