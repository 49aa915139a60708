#!/usr/bin/env bash
# Session 30, GPU call 2. carry [".gl", ".pk"]; pack on branch p7-defer (5d20717):
# `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append pair=f4de0b7:turboprof,bench_append,test_append_decode
#  nofl=d8430d7:turboprof,bench_append`.
# main = p7-candidate with a fresh tile's K and V loads all issued before either side is patched
# from the overlay (run 1, p7-candidate: its last split's tiles 1.33 -> 2.62 us against
# split-append-3, turbo3's fused 4K step 14.5-15.0%: patching K in fetch_k_as waited for K's loads
# before V's were issued). Expected: that split's tiles ~1.3 us again, turbo3 / turbo2 at 4K
# ~4-6% (between nostore's 3.1-3.7 and split-append-3's 7-10: the stores left, without their
# release barrier, at the end). pair (f4de0b7) = main with the pairing probe (run 1: turbo3's last
# prologue 4.96 -> 4.38 us, ~1 point); nofl (d8430d7) = main without the overlay's stores
# (ov_flush; wrong results, timing only): what the stores after the loop still cost.
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
lg "test app"
TKV_BENCH_TYPES=turbo2,turbo3,q8_0 labeled append.txt "2 base 4k" base 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
labeled append.txt "2 main 4k" main 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
for l in pair nofl; do
  TKV_BENCH_TYPES=turbo2,turbo3 labeled append.txt "2 $l 4k" $l 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "2 main 32k" main 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
lg "bench"
for l in main pair nofl; do
  labeled tl.txt "2 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
lg "timelines"
tst tc 150 build-slim/tests/test_decode_tc
cat $R/progress.txt
append_summary
cut -c1-250 $R/tl.txt
