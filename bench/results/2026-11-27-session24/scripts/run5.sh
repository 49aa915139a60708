#!/usr/bin/env bash
# Session 24, GPU call 5 (carry [".gl", ".pk"]: run3's pack, main's binaries; the kernels are
# main's at cf35978). No change measured: where P6a (m 8 / m 1) and P6b (m 3 / m 2) at 32K spend
# their time, phase by phase, for the next session's plan (plain calls, two rounds).
source bench/gpu_prelude.sh
for round in 1 2; do
  for m in 1 2 3 8; do
    rows timeline.txt "$round m$m" main timeline --types turbo3,turbo4,q8_0,f16 --ctx 32k --m $m --repeat 5
  done
  lg "timelines r$round"
done
cat $R/progress.txt
awk '$3!="type"{print $1,$2,$3,$5,"splits="$6,"wgs="$7,"us="$9,"pro="$12,"tiles="$13,"tmax="$14,"arr="$15,"merge="$16,"fin="$17}' $R/timeline.txt | sort -k3,3 -k2,2 -k1,1
