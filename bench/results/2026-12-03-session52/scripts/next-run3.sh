#!/usr/bin/env bash
# Prepared in session 52, not run (~500 s; one round if time is short): next-run2.sh's question
# for P6's shapes, main's binaries: m 2 at 8K and 32K (8 rows: the wide form at 32K, two 4-row
# chunks at 8K), m 3 and m 8 at 32K (rows16), q8_0 / turbo3 / turbo4 / f16, forced TKV_SUBGROUPS
# 4 / 8, TKV_SPLITS 8 / 64, TKV_ROWS16 1 / 0 (the other form). Prediction: none known better; a
# setting that beats the plan in both rounds by more than ~1% names a rule to revisit (P6a is
# 2.30x, P6b 1.40x).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for m in 2 3 8; do
    c=32k; [ $m = 2 ] && c=8k,32k
    forced m$m.txt $rep "profile --types q8_0,turbo3,turbo4,f16 --ctx $c --m $m --modes 0 --repeat 20" \
      "TKV_SUBGROUPS=4 g4" "TKV_SUBGROUPS=8 g8" "TKV_SPLITS=8 s8" "TKV_SPLITS=64 s64" "TKV_ROWS16=1 r16" "TKV_ROWS16=0 c8"
  done
  lg "m 2-8 $rep"
done
report m2.txt m3.txt m8.txt
