#!/usr/bin/env bash
# Session 32, run 2. carry [".gl", ".pk"]; packed on branch fresh-words:
# `bash bench/pack_gpu.sh base=35a4ff9:turboprof,bench_append` (base: main, rows-first merged).
# main = fresh-words: a turbo side's new rows packed into fresh words (plain stores) instead of
# the overlay's field-by-field shared atomics; the new tile's first fetch rebuilds its bits.
# Expected: the tests pass; the fresh split's prologue ~2 us shorter (run 1's diag-nostore-ov:
# 3.87 -> 2.06 us), its tiles a little longer (the rebuild, ~0.1-0.3 us); bench_append's turbo2 /
# turbo3 ratio_pct at 4K down to ~0-2% (q8_0's). The two test binaries run side by side (their
# time is mostly pipeline compiles on the CPU).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst app 240 build-slim/tests/test_append_decode &
tst tc 240 build-slim/tests/test_decode_tc &
wait
for rep in 1 2; do
  TKV_BENCH_TYPES=turbo2,turbo3 app append.txt "$rep base 4k" base fused/llama8b
  app append.txt "$rep main 4k" main fused/llama8b
done
lg "bench"
for l in base main; do
  tl tl.txt "$l" $l --fused --types turbo3,turbo2,turbo4 --ctx 4100 --repeat 20
done
lg "timelines"
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
