#!/usr/bin/env bash
# Session 38, run 1. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh m16=exp-inj-m16:turboprof
#   m32=exp-inj-m32:turboprof a64=exp-inj-a64:turboprof a128=exp-inj-a128:turboprof
#   f64=exp-inj-f64:turboprof f128=exp-inj-f128:turboprof
# The price of one more instruction of a kind, in the tile loop itself (timing only; the extra
# work is folded into the output times pc.softcap, 0 here): m16/m32 add 16/32 MMAs a tile on the
# score MMAs' operands, a64/a128 64/128 ALU instructions (shift and 3-input xor, 4 chains), f64/f128
# 64/128 FFMA (4 chains). Predictions per added instruction, in cycles a tile a scheduler: issue-bound
# (others x 1 + MMA x 7, session 37): MMA 7, ALU 1 (2 if the half-rate ALU pipe binds), FFMA 1;
# latency-bound with idle issue slots: well under those. Also main's SASS with encodings (control codes).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for l in main m16 m32 a64 a128 f64 f128; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 20
  done
  lg "ab $rep"
done
for l in main m16 m32 a64 a128 f64 f128; do loops "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
sass main main profile --types turbo2,turbo3,turbo4,q8_0,f16 --ctx 128k --modes 0 --repeat 2
lg sass
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
grep -E "^== |steady path:|issue floor" $R/loops.txt
bundle ab.txt loops.txt sass-main.tar.gz sass-main.txt
