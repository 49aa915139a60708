#!/usr/bin/env bash
# Session 37, run 4. carry [".gl", ".pk"] (run 3's pack; main's binaries).
# Runs 2-3: neither more independent work in a block (skew) nor shorter MMA chains (acc4) moved
# the turbo loops, which run at ~0.5 of the issue rate (run 1's steady paths). Is it the number of
# warps? The same work at 128K over 1, 2 and 3 workgroups (4 warps each) an SM: splits 16, 33, 49
# per KV head (x 8 heads = 128, 264, 392 workgroups on 132 SMs; the plan takes 49 for turbo2/3 and
# 33 for turbo4, whose tables leave two an SM by its shared-memory rule), and 66 (4 an SM: more than
# the registers allow, a second wave). Prediction, if latency-bound: 1 -> 2 an SM near 2x, 2 -> 3
# ~1.3-1.5x; turbo4 at 49 either a third resident (faster) or a second wave (slower).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for s in 16 33 49 66; do
    export TKV_SPLITS=$s; rows occ.txt "$rep s$s" main profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 20
  done
done
unset TKV_SPLITS; lg occ
cat $R/progress.txt $R/device.txt
python3 bench/ab_summary.py $R/occ.txt
grep -h "128K" $R/occ.txt | awk '{print $1, $2, $3, $7, $15}' | head -30
