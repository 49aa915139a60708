#!/usr/bin/env bash
# Session 38, run 4. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh rot2=exp-rot:turboprof rot4=exp-rot4:turboprof
# Run 3: fences between the MMA blocks do not remove the copies. Its SASS shows the driver keeps
# every score A operand in R56-R59 even when the loads are fresh, and the optimized SPIR-V keeps
# each matrix as a Function variable written element by element (13 such variables): one
# variable, one quad. Try the A operands in rotating variables: rot2 (scores over 2; the output's
# hi and lo as before), rot4 (scores over 4; the output's over 2 pairs). Prediction: copies
# -60 (rot2) to -120 (rot4) in turbo3's loop, each ~1.5-2 cycles: turbo3 128K -8..-20%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
L="main rot2 rot4"
for l in rot2 rot4; do loops "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
grep -E "^== |steady path:|^MOV" $R/loops.txt
for rep in 1 2; do
  for l in $L; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 32k,128k --modes 0 --repeat 20
  done
  lg "ab $rep"
done
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
bundle ab.txt loops.txt
