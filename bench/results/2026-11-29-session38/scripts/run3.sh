#!/usr/bin/env bash
# Session 38, run 3. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh kv=exp-sb-kv:turboprof
#   k=exp-sb-k:turboprof v=exp-sb-v:turboprof kvx=exp-sb-kvx:turboprof
# Runs 1-2: in this loop an added ALU instruction costs ~2 cycles, an IMAD ~1.3-1.6, an FFMA ~1.1,
# an MMA ~5-7, and run 1's model of the same classes sums to 0.87-1.0 of the measured tile. So
# the 152 register copies (IMAD.MOV / MOV, half-rate) cost ~20-25% of turbo3's tile. The SASS shows
# why they exist: the driver hoists the next MMA's table reads above this one and keeps every
# A operand in one register quad (R56-R59), so the loaded pairs are copied in. Try: a
# subgroup-scope fence after each MMA block (kv), of the scores only (k), of the output only (v),
# and an execution-only subgroupBarrier (kvx). Prediction: if a fence stops the hoisting and the
# loads land in the quad, copies -60..-120 and turbo3 128K -10..-20%; if the fences cost
# instructions or expose latency the 3 warps cannot hide, slower.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
L="main kv k v kvx"
for rep in 1 2; do
  for l in $L; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 32k,128k --modes 0 --repeat 20
  done
  lg "ab $rep"
done
for l in kv k v kvx; do loops "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
sass kv kv profile --types turbo3 --ctx 128k --modes 0 --repeat 2
lg sass
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
grep -E "^== |steady path:|^MOV" $R/loops.txt
bundle ab.txt loops.txt sass-kv.tar.gz
