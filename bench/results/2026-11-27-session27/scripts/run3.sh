#!/usr/bin/env bash
# Session 27, GPU call 3 (carry [".gl", ".pk"]; the pack of run1, b5ddfe4, whose plans equal
# main's with TKV_LONG_LAST=0 exported).
# (a) P6b probe (m 3 within 1.1x of m 2 at 32K; session 24: q8_0 1.22x, turbo 1.19-1.20x): m 2
#     (8 rows: the columns' wide form) on the MMAs' 16-row side (TKV_ROWS16=1; turbo also in 8
#     subgroups, m 3's plan), against the plan's m 2 and m 3. Expected: rows16 m 2 slower than
#     wide m 2 by ~0-10%; if within ~3%, m 3 / m 2 ~1.05 there.
# (b) bench_append's fused rows at base 4032 (steps at 4032-4095 old tokens, no band) for f16 and
#     turbo2 (run2 had q8_0, turbo3, turbo4).
source bench/gpu_prelude.sh
export TKV_LONG_LAST=0
for round in 1 2; do
  rows p6b.txt "$round plan m2" main profile --ctx 32k --m 2 --modes 0 --repeat 20
  rows p6b.txt "$round plan m3" main profile --ctx 32k --m 3 --modes 0 --repeat 20
  TKV_ROWS16=1 rows p6b.txt "$round rows16 m2" main profile --ctx 32k --m 2 --modes 0 --repeat 20
  TKV_ROWS16=1 TKV_SUBGROUPS=8 rows p6b.txt "$round rows16-8sg m2" main profile --types turbo2,turbo3,turbo4 --ctx 32k --m 2 --modes 0 --repeat 20
  lg "p6b r$round"
done
TKV_BENCH_TYPES=f16,turbo2 TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_APPEND_CTX=4032 app append.txt "1 4032:64 off" main 'fused/llama8b'
TKV_BENCH_TYPES=f16,turbo2 TKV_BENCH_APPEND_FORMATS=f32 TKV_BENCH_APPEND_CTX=4096 app append.txt "1 4096:64 off" main 'fused/llama8b'
lg "append"
cat $R/progress.txt
grep -v ' type ' $R/p6b.txt | awk '{print $1, $2, $3, $4, $8, "splits="$15}' | sort -k4,4 -k3,3 -k2,2 -k1,1
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
