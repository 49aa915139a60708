#!/usr/bin/env bash
# Session 38, run 6. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh (main with the alu and imad kinds).
# Runs 1-2 priced instructions in the tile loop itself: ALU (SHF, LOP3) ~2 cycles, IMAD ~1.3-1.6,
# FFMA ~1.1, MMA ~5-7. Standalone: turboprof issue's new kinds alu (shift and xor: ALU pipe alone)
# and imad (multiply-add: the FMA-heavy pipe alone) beside int and fp32. Prediction: if those
# pipes are 16 lanes wide, alu and imad ~0.5 instructions a cycle a scheduler, int ~1 (its mix
# spreads over both), fp32 ~1.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
timeout 200 $P issue --kinds int,fp32,alu,imad --body 16 --warps 4,8,16,32 --repeat 10 > $R/issue.txt 2>&1
lg "issue rc $?"
sass issue main issue --kinds int,fp32,alu,imad --body 16 --warps 16 --steps 256 --repeat 1
for f in /tmp/sass-out-issue/*.sass; do
  for h in SHF IMAD FFMA; do
    out=$(python3 bench/sass_loop.py "$f" --holds $h 2>&1)
    echo "$out" | grep -q "^loop" && { echo "== $(basename $f) holds $h"; echo "$out"; }
  done
done > $R/loops.txt 2>&1
lg sass
cat $R/progress.txt $R/device.txt $R/issue.txt
cut -c1-200 $R/loops.txt | grep -E "^==|^loop|^[A-Z]"
bundle issue.txt loops.txt
