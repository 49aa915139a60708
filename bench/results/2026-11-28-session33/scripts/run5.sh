#!/usr/bin/env bash
# Session 33, run 5. carry [".gl", ".pk"]; packed on branch lane-words:
# `bash bench/pack_gpu.sh base=be64a93:turboprof,bench_append ef=acebda2:turboprof,bench_append`
# main = lane-words: a subgroup's first tile's loads go out at the prologue's first barrier (not
# after the second and the query fragments), the fresh tile patched after the second; in the pair
# form subgroups 2 and 3 rebuild the last tile's new bits for every lane (K and V side by side)
# between the barriers, and the owner reads its lane's words instead of rebuilding both sides.
# ef = the same without the lane words (the earlier first fetch alone). base = main be64a93.
# Runs 3-4: the fresh split (turbo2, 4097): rows 2.2-2.4 us, barrier 2 at 2.7, the owner's first
# fetch + patch done at 4.04 (its rebuild ~1.3 us of ALU in one subgroup, the loads already in
# flight or not), its loop at 4.78; the plain splits' tiles end at ~4.3.
# Expected: tests pass; turbo2's fresh split ~0.6-0.9 us shorter, no longer the last; turbo2
# ratio_pct ~5 -> ~2-3%; plain splits' prologue ~0.1-0.3 us shorter (ef and main).
# Then main's P1-P8 table, if the tests pass.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
wait
tls turbo2,turbo3,turbo4 4097 base ef main
apps 2 turbo2,turbo3,turbo4 base main
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
if grep -q "tc rc 0" $R/progress.txt && grep -q "app rc 0" $R/progress.txt; then targets 290; fi
