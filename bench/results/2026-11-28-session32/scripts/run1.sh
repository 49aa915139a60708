#!/usr/bin/env bash
# Session 32, run 1 (written in session 31 as its run5, not run there: its device time was spent).
# carry [".gl", ".pk"]; pack on branch rows-first:
# `bash bench/pack_gpu.sh base=BASE:turboprof,bench_append vstamp=ec7dff1:turboprof nost=13835be:turboprof`
# (.pk packed so at the end of session 31 with BASE = ec4c7dd, main then; its kernels are 610a689's.)
# main = rows-first: in the tc fused split, a quantizing subgroup's first new row's loads issued
# before the overlay's clear and its barrier (run3: the K row's loads arrive ~1.3-1.4 us into the
# split, quantized at ~2.4, stored at 3.0-3.35, prologue done ~4.5). vstamp: rows-first with the
# 'rows' stamp taken by subgroup 1 (V's quantizer, twice K's fields to store) instead of 0;
# nost: rows-first without the turbo overlay's store (wrong results; what that store costs).
# Expected: the tests pass; main's 'rows' ~0.1-0.2 us earlier than base's; vstamp's later than
# main's by V's extra store (~0.3-0.5 us?); nost's 'rows' ~0.7-1.0 us earlier than main's.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst app 200 build-slim/tests/test_append_decode
tst tc 150 build-slim/tests/test_decode_tc
TKV_BENCH_TYPES=turbo2,turbo3 app append.txt "4 base 4k" base fused/llama8b
app append.txt "4 main 4k" main fused/llama8b
lg "bench"
for l in base main vstamp nost; do
  tl tl.txt "4 $l" $l --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
lg "timelines"
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
