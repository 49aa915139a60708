#!/usr/bin/env bash
# Session 38, run 5. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh t32=exp-t32:turboprof,test_decode_tc
# Runs 3-4: neither fences nor rotating variables move the copies. turbo2's exact K (one 32-bit
# table word a register) is loaded mostly straight into its quads, where turbo3's (hi, lo) LDS.64
# pairs are copied: a pair's hi and lo go to registers of different quads. t32: the tables as
# 32-bit words (hi halves, then lo halves; 32 lane copies, 16 KB for turbo3), two LDS.32 a pair.
# Prediction: if the driver then loads into the quads, copies -60..-120, LDS +64, turbo3 128K
# -5..-15%; if it still copies, slower (twice the table reads). turbo4's tables would pass 48 KB:
# not run. Its tc tests (on the GPU) check the values.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
loops t32 t32 profile --types turbo2,turbo3 --ctx 128k --modes 0 --repeat 2
lg loops
grep -E "^== |steady path:|^MOV" $R/loops.txt
for rep in 1 2; do
  for l in main t32; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3 --ctx 32k,128k --modes 0 --repeat 20
  done
  lg "ab $rep"
done
python3 bench/ab_summary.py $R/ab.txt
tst t32 200 build-slim/tests/test_decode_tc-t32
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
bundle ab.txt loops.txt tests.txt
