#!/usr/bin/env bash
# Session 27, GPU call 2 (carry [".gl", ".pk"]; the pack of run1, b5ddfe4). run1: the long last
# split made single fused calls at 4100 / 4160 old tokens (timeline, the layer's bytes hot in L2)
# even or faster, but bench_append's fused steps (32 layers, 4096-4159 old tokens, cold) slower
# for every type (q8_0 6.1-6.7% -> 9.9-11.9%, turbo4 7.7-8.6% -> 10.3-10.7%).
# Here: bench_append's fused rows at bases 4096 (on / off), 4032 (its steps at 4032-4095 old
# tokens: 32 two-step splits in both plans, no band) and 4100 with 8 steps a submission (on /
# off); f32 rows of turbo3, turbo4 and q8_0. Expected, if the band's cost is the long split's own:
# 4032 ~2-3%, on at 4096 / 4100 worse than off.
source bench/gpu_prelude.sh
on() { unset TKV_LONG_LAST; }
off() { export TKV_LONG_LAST=0; }
export TKV_BENCH_TYPES=turbo3,turbo4,q8_0 TKV_BENCH_APPEND_FORMATS=f32
for round in 1 2; do
  for cfg in "4096 64 on" "4096 64 off" "4032 64 on" "4100 8 on" "4100 8 off"; do
    set -- $cfg
    $3
    [ $((SECONDS-T0)) -lt 500 ] && TKV_BENCH_APPEND_CTX=$1 TKV_BENCH_REPEAT=$2 app append.txt "$round $1:$2 $3" main 'fused/llama8b'
  done
  lg "append r$round"
done
unset TKV_LONG_LAST
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt | sort -k4,4 -k2,2 -k3,3 -k1,1
