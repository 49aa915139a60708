#!/usr/bin/env bash
# Session 31, GPU call 3. carry [".gl", ".pk"]; pack on branch early-fetch (9002b40):
# `bash bench/pack_gpu.sh base=6a50c12:turboprof,bench_append dload=e1bf77c:turboprof dquant=1c55576:turboprof`.
# main = early-fetch: in the tc kernel's columns form, a subgroup's first tile's loads issued
# during the prologue (its page loaded directly at the start) instead of after the prologue's
# barriers; base = main at 6a50c12 (610a689's kernels). dload / dquant: early-fetch with the
# timeline's slot 6 ("tail: rows") stamped when the fused split's new row's loads arrived /
# when it is quantized, before its store (timing only), to split the quantizer's ~3 us.
# Expected: the tests pass; every split's tiles phase ~0.5 us shorter (the first tile's load
# latency hidden by the prologue): plain 4K / 8K calls ~0.4-0.6 us faster, 32K a little;
# P7's ratios about as before (the fresh split and the others gain alike).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst tc 150 build-slim/tests/test_decode_tc
tst app 200 build-slim/tests/test_append_decode
TKV_BENCH_TYPES=turbo2,turbo3,q8_0 app append.txt "4 base 4k" base fused/llama8b
app append.txt "4 main 4k" main fused/llama8b
lg "bench"
for l in main dload dquant; do
  labeled tl.txt "4 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
for l in base main; do
  labeled tl.txt "4 $l plain" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --types turbo3,q8_0 --ctx 4096 --repeat 20
  rows prof.txt "4 $l" $l profile --types turbo3,q8_0,f16,turbo2 --ctx 4k,8k,32k --modes 0 --repeat 10
done
lg "timelines, profiles"
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
cut -c1-160 $R/prof.txt
