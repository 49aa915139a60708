#!/usr/bin/env bash
# Prepared in session 41, not run (no device time left). carry [".gl", ".pk"]; pack at main with
# the experiment as a label (it can share a pack with next-tilesup.sh's):
#   git checkout -b exp-rowpatch && git apply bench/results/2026-11-29-session41/patches/rowpatch-not-run.patch \
#     && git commit -qam "exp rowpatch" && git checkout main
#   bash bench/pack_gpu.sh rowpatch=exp-rowpatch:bench_append,turboprof,test_append_decode
# P7's worst type is q8_0 (6.08%, session 41 run 7). Its fused split stores its new rows to the
# pool during the prologue and reads them back through coherent views after a buffer barrier on
# each side of the workgroup barrier (STORES_VISIBLE, STORES_SEEN): run 5's per-workgroup stamps
# put that split's new rows done 2.3-2.5 us after its start and its prologue's end at 3.5-3.9 us
# (the other splits' 1.3). rowpatch does for row sides what the turbo sides do: the quantizing
# subgroup also packs each new row as the pool holds it into fresh words in shared memory
# (fw_write_row), the pool stores are still made (atomics) but not awaited, and a fresh tile is
# loaded plainly and its new tokens' words and scales replaced from the fresh words
# (patch_k_rows, patch_v_rows, at fetch_k_words' and fetch_v_words' places). In the columns form
# only; rows16 keeps storing and reading back. The plan counts the fresh words
# (decode_shared_bytes). It compiles; nothing has tested it: lavapipe runs no tc kernel, so the
# script's first step, test_append_decode of that build on the GPU (q8_0 and f16 fused cases at
# several shapes, m 1-8), is its only test. Stop there if it fails.
# Prediction: q8_0's fresh split's prologue 3.5-3.9 -> ~2.5 us; P7 q8_0 ~6% -> ~4%, f16 ~1% ->
# ~0-1%; the turbo types unchanged (turbo3 as control).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-rowpatch 240 build-slim/tests/test_append_decode-rowpatch
grep -q "PASSED" $R/tests.txt && ! grep -q "FAILED" $R/tests.txt || { cat $R/progress.txt; exit 1; }
for l in main rowpatch; do tl tl.txt "$l fused 4095" $l --fused --types q8_0,f16,turbo3 --ctx 4095 --repeat 20; done
lg tl
apps 2 q8_0,f16 main rowpatch
apps 1 turbo3 rowpatch
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
