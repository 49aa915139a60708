#!/usr/bin/env bash
# Session 24, GPU call 4 (carry [".gl", ".pk"]: run3's pack, main's binaries). Call 3: past 4096
# old tokens the fused m 1 call (22 three-step splits of 4 subgroups) costs ~0.8 us more than at
# 4096 (32 two-step ones); the branch's 33 splits + tails in an SM's third slot was no faster
# (tiles max even) and bench_append worse. Here: wider workgroups keep two tiles a subgroup past
# 4096 (6 subgroups: 96-token steps, 22 two-step splits; 8: 17 two-step splits), if 12-16 warps an
# SM don't slow each tile as much (plain 8K with 6 subgroups was 4% slower, at one tile less).
# Also the plain call at 4100 (what a decode step past 4096 pays) and bench_append's fused rows
# with TKV_SUBGROUPS=6 (its decode steps take 6 subgroups too).
source bench/gpu_prelude.sh
for round in 1 2; do
  rows timeline.txt "$round plain sg-plan" main timeline --types turbo3,turbo4,q8_0,turbo2 --ctx 4096,4100 --m 1 --repeat 5
  for g in plan 6 8; do
    ([ $g = plan ] || export TKV_SUBGROUPS=$g
     rows timeline.txt "$round fused sg-$g" main timeline --fused --types turbo3,turbo4,q8_0,turbo2 --ctx 4096,4100 --m 1 --repeat 5)
  done
  lg "timelines r$round"
done
for g in plan 6; do
  ([ $g = plan ] || export TKV_SUBGROUPS=$g; app append.txt sg-$g main 'fused/.*/f32')
  lg "bench_append sg-$g"
done
cat $R/progress.txt
awk '$4!="type"{print $1,$2,$3,$4,$6,$7,$8,$11,$15,$16}' $R/timeline.txt | sort -k4,4 -k5,5 -k2,2 -k3,3
grep -oE "^sg-[a-z0-9]+ fused/llama8b/[a-z0-9_]+/f[0-9]+|decode_step_us=[0-9.]+|fused_step_us=[0-9.]+|ratio_pct=[0-9.]+" $R/append.txt | paste - - - - | sort -k2,2
