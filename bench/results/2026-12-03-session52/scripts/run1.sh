#!/usr/bin/env bash
# Prepared in session 51, not run (~420 s): vdepth (branch exp-vdepth, on 2bdf5a7's
# kernels): q8_0 V one tile ahead in the one-row loop only where a subgroup has more than two
# tiles of a split (spec constant V_AHEAD_ROW, id 21; plan field v_ahead; TKV_V_AHEAD=0/1 forces
# it). Session 51 run 3 (nova: never ahead in the one-row loop): 1K 10.0 -> 9.7 us, 4K 13.6 ->
# 13.5, the 32-layer step at 4K 403 -> 396 us (splits of 128 tokens: two tiles a subgroup); 32K
# 31.9 -> 32.6, 128K 86.2 -> 88.1 (eight tiles and more). Where the line lies between (8K, 16K:
# three to seven tiles?) is this run's second question: vd's q8_0 sweep with TKV_V_AHEAD=0 and =1.
# Tests: vd's tc suite with the plan's choice (off at the tests' short splits) and with
# TKV_V_AHEAD=1 (on everywhere), its fused suite (its one-row loop unchanged).
# Prediction: vd at 1K / 4K as nova (-2..-3% against main), from 32K as main; bench_append's q8_0
# decode step at 4K ~396 us (main ~403), its fused step as main's (P7 then ~3%: the fused step is
# unchanged, the decode step falls).
# carry [".gl", ".pk"]; pack at main (with next-run2.sh's label too, one pack for both):
# bash bench/pack_gpu.sh vd=exp-vdepth:turboprof,bench_append,test_decode_tc,test_append_decode x32=exp-x32:turboprof,test_decode_tc,test_append_decode
# (no branch exp-vdepth here: git checkout -b exp-vdepth main && git apply bench/results/2026-12-03-session51/patches/vdepth-not-run.patch && git commit -qam vdepth)
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc-vd 300 build-slim/tests/test_decode_tc-vd &
tst app-vd 300 build-slim/tests/test_append_decode-vd &
(export TKV_V_AHEAD=1; tst tc-vd-on 300 build-slim/tests/test_decode_tc-vd) &
wait; lg tests
if passed tc-vd && passed tc-vd-on && passed app-vd; then
  AB_FILE=vd.txt rounds 2 "main vd" profile --types q8_0 --ctx 1k,2k,4k,8k,16k,32k,128k --modes 0 --repeat 20
  for a in 0 1; do  # (the line: vd forced off, then on)
    TKV_V_AHEAD=$a AB_FILE=vd$a.txt rounds 2 "vd" profile --types q8_0 --ctx 4k,8k,16k,32k --modes 0 --repeat 20
  done
  apps 2 q8_0 main vd
  append_summary
fi
report vd.txt vd0.txt vd1.txt
