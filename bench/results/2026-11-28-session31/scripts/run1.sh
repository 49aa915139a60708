#!/usr/bin/env bash
# Session 30's next call: NOT RUN (the session's device time was spent); the next session's first.
# carry [".gl", ".pk"]; pack on branch p7-store-pair-pages (e5ee78a):
# `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append store=b9779b4:turboprof,bench_append
#  pair=c1fa82a:turboprof,bench_append pages=81220ff:turboprof`.
# (.pk was packed so at the end of session 30; the script needs only .pk and bench/gpu_prelude.sh,
# so it runs from main's checkout too. p7-store-pair-pages's fresh-clone CI on lavapipe passed:
# 243 of 243 quick, 239 of 239 sanitizers, the tc tests skipped there.)
# main = p7-store (run3) + pair (c1fa82a: in the fused split of a turbo pair in four subgroups,
# the query rows on subgroups 2 and 3 and the tables built by them alone while 0 and 1 quantize)
# + pages (81220ff, branch pages-late on main: a split's page numbers loaded at its start and
# stored into shared memory just before the prologue's barrier; before, subgroup 0 stored them
# first thing, waiting for their load before issuing its query rows' loads).
# Expected: pair: the fused split's prologue 4.4-4.6 -> ~3.3-3.6 us, turbo2 / turbo3 at 4K
# 8.3-9.8% -> ~4-6%; pages: every split's prologue ~0.3-0.5 us shorter (run3's 1.8-2.0 us), the
# plain calls at 4K / 8K a few % faster, 32K ~1%; the tests pass (pair and pages never ran them).
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
tst tc 150 build-slim/tests/test_decode_tc
TKV_BENCH_TYPES=turbo2,turbo3,q8_0 app append.txt "4 base 4k" base fused/llama8b
for l in store pair; do TKV_BENCH_TYPES=turbo2,turbo3 app append.txt "4 $l 4k" $l fused/llama8b; done
app append.txt "4 main 4k" main fused/llama8b
lg "bench"
for l in store pair main; do
  labeled tl.txt "4 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2 --ctx 4100 --repeat 20
done
for l in base pages; do
  labeled tl.txt "4 $l plain" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --types turbo3,q8_0 --ctx 4096 --repeat 20
  rows prof.txt "4 $l" $l profile --types turbo3,q8_0,f16 --ctx 4k,8k,32k --modes 0 --repeat 10
done
lg "timelines, profiles"
cat $R/progress.txt
append_summary
cut -c1-250 $R/tl.txt
cut -c1-160 $R/prof.txt
