#!/usr/bin/env bash
# Prepared in session 52, not run (~480 s): branch exp-eight (label e8; else git checkout -b
# exp-eight main && git apply bench/results/2026-12-03-session52/patches/eight-not-run.patch &&
# git commit -qam eight): two-step splits at two tc workgroups an SM become eight subgroups'
# two-step splits where those fit one wave (llama8b 4K: 16 splits of 8 subgroups, not 32 of 4;
# 3K: 12 of 8, not 24 of 4; 4097 tokens keep 33 of 4). Session 52 runs 4-5 measured the 4K point
# as forced settings (-0.3..-1.1 us per call); not 3K, nor P7's pair (bench_append at 4096
# tokens: the fused call plans as the decode call, so both steps change), nor the GPU suites.
# main's suites run too: a674cb4 added a fused case with one-step splits (test_append_decode
# TailEdges), whose tc form only the GPU runs.
# Prediction: 4K -0.3..-1.1 us every type but turbo4 (its 256-entry plan has eight already), 3K
# as 4K or better; the 32-layer decode step at 4K -10..-30 us; P7 within 5% if the fused step
# falls as much (unknown: turbo2's 4.32% is the nearest).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh e8=exp-eight:turboprof,bench_append,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
suites 250 main
suites 250 e8
timeout 120 $P-e8 check --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 1k,3k,4k > $R/check-e8.txt 2>&1
lg "check $(tail -1 $R/check-e8.txt)"
if passed tc-e8 && passed app-e8; then
  AB_FILE=e8.txt rounds 2 "main e8" profile --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 3k,4k,4097 --modes 0 --repeat 20
  apps 2 f16,q8_0,turbo2,turbo3,turbo4 main e8
  append_summary
fi
report e8.txt
