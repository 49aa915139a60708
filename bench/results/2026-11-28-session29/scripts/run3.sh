#!/usr/bin/env bash
# Session 29, GPU call 3: NOT RUN (the session's device time was spent); for the next session.
# carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append
# s3=c857445:turboprof,bench_append` on branch split-append-4 at its last commit.
# main = split-append-3 (s3) with the turbo sides' overlay: the new tokens' bits recorded in
# shared memory as they are quantized (qr_pool_or), patched into the split's first fetch of their
# tile (the bits they own follow from the layout: k_new_mask, v_new_mask), stored in the pool after
# its tile loop (ov_flush); no memory barrier and no coherent view for turbo sides (rows are read
# back as in s3). Compiled and planned here (test_plan), never run on a GPU: the tests first.
# Expected: the tests pass; 4K turbo3 / turbo2 ~3-4% (run2's store knock-out: turbo3 3.1-3.7%);
# q8_0, f16 as s3 (~1%); turbo4 ~3%; 32K as s3 (turbo3 ~0%, q8_0 0.5-1.2%). The timelines' 'rows'
# column (slot 6) is the fresh splits' quantizer: start to new rows recorded (turbo2 vs turbo3).
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
lg "tests"
for l in base s3 main; do
  labeled append.txt "1 $l 4k" $l 100 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
for l in base main; do
  TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 $l 32k" $l 60 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
  labeled tl.txt "1 $l" $l 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2,q8_0 --ctx 4100 --repeat 20
  labeled tl.txt "1 $l m8" $l 40 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --m 8 --types turbo3 --ctx 4k --repeat 20
done
lg "bench"
tst tc 150 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*'
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
