#!/usr/bin/env bash
# Session 37, run 3. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh acc4=exp-acc4:turboprof,test_decode_tc
# Run 2: skew lost (turbo3 128K 70.5 -> 73.2 us); on top of it, two score accumulator chains a
# token half (acc4) took turbo4 back from 102.2 to 96.8. Here acc4 on main's order (exp-acc4):
# the scores' 16 MMAs as 4 chains of 4 instead of 2 of 8, +4 FADD a lane and 8 registers.
# Prediction: turbo4 -3..-5% at 32K-128K, turbo2/3 within +-1%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2 3; do
  for l in main acc4; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
  done
done
lg ab
sass acc4 acc4 profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; rm -f $R/sass-acc4.txt
lg sass
cat $R/progress.txt $R/device.txt
python3 bench/ab_summary.py $R/ab.txt
