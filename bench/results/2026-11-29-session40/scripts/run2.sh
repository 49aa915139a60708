#!/usr/bin/env bash
# Session 40, run 2 (same pack as run 1). Run 1: t2pair cut turbo2's steady path 486 -> 397
# instructions but 128K went 61.5 -> 63.5 us: its 32 KB table leaves one workgroup an SM (8
# warps; base runs two of six, 12 warps). Does the driver really hold only ~50 KB of shared
# memory an SM (the plan's kTensorCoreSharedPerUnit, inferred from timings on the H100)? Forced
# shapes, with the timeline's count of late workgroups (a second wave) as the direct answer:
# t2pair (main) and turbo4 (tab256 in both builds) in 6 subgroups x 33 splits (2 an SM if 2 x
# ~36 KB fit) and 4 x 49 (3 an SM if 3 x ~35 KB fit), against their plans (8 subgroups, 1 an SM).
# Prediction if only one fits: late > 0 and 1.5-2x slower. If two fit: turbo2 128K ~52 us.
source bench/gpu_prelude.sh
# (The first attempt lost every row: a "/" in the prefixes broke labeled's sed; now "x".)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
cfg() {  # LABEL SUBGROUPS SPLITS TYPES (SUBGROUPS 0: the plan)
  local l=$1 sg=$2 sp=$3 ty=$4 rep
  if [ "$sg" = 0 ]; then unset TKV_SUBGROUPS TKV_SPLITS; else export TKV_SUBGROUPS=$sg TKV_SPLITS=$sp; fi
  tl tl.txt "$l s${sg}x$sp" "$l" --types "$ty" --ctx 128k --repeat 10
  for rep in 1 2; do rows ab.txt "$rep $l-s${sg}x$sp" "$l" profile --types "$ty" --ctx 32k,128k --modes 0 --repeat 20; done
  unset TKV_SUBGROUPS TKV_SPLITS; lg "$l $sg $sp $ty"
}
cfg base 0 0 turbo2
cfg main 0 0 turbo2
cfg main 6 33 turbo2
cfg main 4 49 turbo2
cfg base 6 33 turbo2
cfg base 4 49 turbo2
cfg main 0 0 turbo4
cfg main 6 33 turbo4
cfg main 4 49 turbo4
cat $R/progress.txt $R/device.txt
python3 bench/ab_summary.py $R/ab.txt
cut -c1-200 $R/tl.txt
