#!/usr/bin/env bash
# Session 37, run 5. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh nolds=exp-nolds:turboprof lds32=exp-lds32:turboprof
# Run 4: 8 -> 12 warps an SM gain 5-7%, so an SM-wide limit holds the turbo loops near half the
# issue rate. The shared-memory pipe is the one SM-wide unit the loop leans on (65 table reads a
# warp tile). Knock-outs (wrong values; timing only): nolds makes each table entry from its field
# in registers (no shared-memory reads in the loop; the index math and MMAs stay); lds32 reads
# only the hi pair (LDS.32, half the bytes; lo = hi). Prediction, if the shared-memory pipe is the
# limit: nolds far faster (toward the issue floor, ~36-40 us for turbo3 at 128K), lds32 in
# between; if not, both within a few %.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for l in main nolds lds32; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 32k,128k --modes 0 --repeat 20
  done
done
lg ab
for l in nolds lds32; do sass "$l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; rm -f $R/sass-$l.txt; done
lg sass
cat $R/progress.txt $R/device.txt
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
