#!/usr/bin/env bash
# Session 50 run 2: ahead2 (branch exp-ahead2): the 8-column loop's PREFETCH types (turbo, f16)
# two tiles ahead in three register buffers (three steps an iteration) instead of one in two.
# Why now: the targets table (../targets/) has turbo3's mode 1 (reads nothing) at 52.7 us at 128K
# against mode 0's 69.4 (1.32x; session 46: ~67 against 71.7, 1.07x): since session 49's two
# buffers the loop without reads is much cheaper than the loop with them, so the reads' latency
# is exposed again. Session 12 measured two ahead as slower (tuning log §20, run 6), when mode 1
# itself was the bound. Prediction: +~14 registers (turbo3 K+V words of one tile a lane); if
# occupancy holds (shared memory bounds it at 3 workgroups an SM), m 1 turbo at 128K toward mode
# 1: turbo3 69.4 -> ~60 us, 32K 27.4 -> ~24; at 8K even or slower (the longer prologue).
# carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh ahead2=exp-ahead2:turboprof,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main ahead2; do loops $l $l profile --types turbo3 --ctx 32k --modes 0 --repeat 2; done
lg loops
AB_FILE=m1.txt rounds 2 "main ahead2" profile --types turbo2,turbo3,turbo4,f16 --ctx 8k,32k,128k --modes 0 --repeat 20
AB_FILE=m2.txt rounds 1 "main ahead2" profile --types turbo3,f16 --ctx 32k --m 2 --modes 0 --repeat 20
suites 250 ahead2
report m1.txt m2.txt
