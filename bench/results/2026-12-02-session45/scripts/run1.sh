#!/usr/bin/env bash
# Session 45, run 1: session 44's run 4 (q8k, q8kv; see ../../2026-12-02-session44/scripts/run4.sh
# for the change and the prediction) with a whole device budget: q8kv's tc and append suites
# whole, then two rounds of the q8_0 sweep and the batch-16 row, then the loop counts.
# carry [".gl", ".pk"]; pack at main f0a5f83:
# bash bench/pack_gpu.sh q8k=exp-q8k:turboprof q8kv=exp-q8kv:turboprof,test_decode_tc,test_append_decode
# Prediction: q8_0 128K 108.9 -> ~97 us (q8k), ~92 (q8kv); 32K 37.4 -> ~35; 4K within 0.5 us.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc-q8kv 240 build-slim/tests/test_decode_tc-q8kv &
tst app-q8kv 280 build-slim/tests/test_append_decode-q8kv &
wait
lg tests
rounds 2 "main q8k q8kv" profile --types q8_0 --ctx 4k,16k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main q8k q8kv" profile --types q8_0 --ctx 8k --batch 16 --modes 0 --repeat 20
for l in main q8k q8kv; do loops $l $l profile --types q8_0 --ctx 128k --modes 0 --repeat 2; done
lg loops
report b16.txt
