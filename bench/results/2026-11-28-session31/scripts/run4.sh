#!/usr/bin/env bash
# Session 31, GPU call 4 (the session's last ~430 s). carry [".gl", ".pk"]; pack on branch
# store-words: `bash bench/pack_gpu.sh base=6a50c12:turboprof,bench_append`.
# main = store-words: qr_store_tile writes a row's turbo bits an invocation per tile word (its
# fields assembled in registers, one pair of atomics a word) instead of an invocation per field;
# base = main at 6a50c12 (610a689's kernels). run3's stamps: the fused split's K row loaded at
# ~1.3-1.4 us, quantized at ~2.4, stored at 3.0-3.35 (turbo2 / turbo3), prologue done ~4.5.
# Expected: the tests pass; 'rows' ~2.5-2.7 us, the fresh split's prologue ~0.5-0.8 us shorter
# (V's store, twice K's fields, shrinks more), turbo2 / turbo3 at 4K ~8% -> ~5-6%.
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
TKV_BENCH_TYPES=turbo2,turbo3 app append.txt "4 base 4k" base fused/llama8b
TKV_BENCH_TYPES=turbo2,turbo3,turbo4 app append.txt "4 main 4k" main fused/llama8b
lg "bench"
for l in base main; do
  labeled tl.txt "4 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
lg "timelines"
cat $R/progress.txt
append_summary
cut -c1-250 $R/tl.txt
