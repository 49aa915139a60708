#!/usr/bin/env bash
# (Session 51 run 2: session 50's next-run1.sh as run.)
# Prepared in session 50, not run: is the 4K step's rise a regression of session 49's loops?
# Session 50's table against session 46's: P5b's 32-layer decode steps at 4K rose for every type
# (q8_0 389.6 -> 403.7 us, +3.6%; turbo2 +1.4%, turbo3 +1.6%, turbo4 +2.1%, f16 +0.2%) and P7's
# q8_0 case to 6.74% (fused step 431 against 404.2 us; session 47 run 1 read 3.0-3.9% six times).
# One reading each. Candidates: 12690c3 (two tile buffers, two steps an iteration: a longer loop
# and prologue; session 49 run 1 had the turbo types +1..2% at 8K and q8_0 m 1 +1.5% at 32K with
# 11 more copies), f75932c (session 47: q8_0's V one tile ahead in the one-row loop; its run 2
# read 4K even) and 292bfa1 (session 50's second score chain, wide form only: m 1 untouched).
# pre49 = 12690c3^ (session 48's main), s46 = e1fa042 (session 46's table).
# carry [".gl", ".pk"]; pack at main (~300 s):
# bash bench/pack_gpu.sh pre49=12690c3^:turboprof,bench_append s46=e1fa042:turboprof,bench_append
# Prediction if 12690c3 is the cause: pre49's decode and fused steps 1.5-3.5% below main's for all
# types, and q8_0's fused step ~12-16 us above its decode step (P7 ~3-4%); if f75932c, pre49 as
# main and s46 below both for q8_0 alone; if neither, all three even (the table's reading noise).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
apps 3 q8_0,turbo3,turbo2 main pre49 s46
AB_FILE=4k.txt rounds 2 "main pre49 s46" profile --types q8_0,turbo2,turbo3,turbo4 --ctx 1k,4k --modes 0 --repeat 20
append_summary
report 4k.txt
