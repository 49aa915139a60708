#!/usr/bin/env bash
# Session 38, run 2. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh wa64=exp-inj-wa64:turboprof
#   wa128=exp-inj-wa128:turboprof wh64=exp-inj-wh64:turboprof wf64=exp-inj-wf64:turboprof
#   wf128=exp-inj-wf128:turboprof wm16=exp-inj-wm16:turboprof
# Run 1's injected work came in 4 dependent chains (2 for the MMAs), so its price could be the
# chains' latency rather than issue. Here the same kinds over 8 chains (MMAs over 4), and IMAD
# (the half-rate FMA-heavy pipe, as the loop's IMAD.MOV copies) added. Prediction: if the loop
# is bound by issue with half-rate integer pipes, ALU and IMAD ~2 cycles each, FFMA ~1, MMA ~5.5,
# as in run 1; if run 1 priced latency, all lower here.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
L="main wa64 wa128 wh64 wf64 wf128 wm16"
for rep in 1 2; do
  for l in $L; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 20
  done
  lg "ab $rep"
done
for l in $L; do [ $l = main ] || loops "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
sass wa64 wa64 profile --types turbo3 --ctx 128k --modes 0 --repeat 2
sass wh64 wh64 profile --types turbo3 --ctx 128k --modes 0 --repeat 2
lg sass
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
grep -E "^== |steady path:" $R/loops.txt
bundle ab.txt loops.txt sass-wa64.tar.gz sass-wh64.tar.gz
