#!/usr/bin/env bash
# Session 23, GPU call 1 (carry [".gl", ".pk"] from this folder's pack.sh). Three things, in order
# of what a ship needs:
#  1. main's tc tests with the plan's new defaults (session 22 could not run them): test_decode_tc,
#     test_append_decode; the branches' tests; test_decode LargeContexts f16 (m 8 is rows16 now) last.
#  2. fused append-decode, three builds: c1a6180 (the plan without the tail's shared memory), main
#     (0b0c12d's fix), fused (branch fused-tail-alias: the tail's arrays in the tc region).
#     Expected: c1a6180 -> main: m 1 128K and m 2 faster (no second wave); main -> fused: the
#     plain kernel's occupancy back, faster again at m 1 128K / m 2 / m 8 4K; m 1 4K-32K even.
#  3. rows16-qrows8 against main: every subgroup of 8-subgroup rows16 holds 2 query rows.
#     Expected: prologue -0.5..-1 us at m 3 / m 8 turbo, m 1 unchanged.
# Files: progress.txt, tests.txt, fused-timeline.txt, fused-append.txt, qrows8-timeline.txt,
# qrows8-profile.txt, qrows8-summary.txt.
source bench/gpu_prelude.sh
# (Through gpu_prelude.sh's tst and rows since; the same commands, each turboprof run bounded at
# 60 s where the qrows8 ones had 40, the profile tables with their header rows.)
tst test_decode_tc 120 build-slim/tests/test_decode_tc
tst test_append_decode 120 build-slim/tests/test_append_decode
tst test_append_decode-fused 120 build-slim/tests/test_append_decode-fused
tst test_decode_tc-qrows8 100 build-slim/tests/test_decode_tc-qrows8 --gtest_filter='*Sixteen*:*Subgroups*'
source bench/results/2026-11-27-session23/scripts/ab.sh
fused_timelines "c1a6180 main fused" "1 2 8"
fused_append "c1a6180 main fused"
qrows8_ab "1 3 8"
TKV_LARGE_CONTEXTS=f16 tst large-f16 80 build-slim/tests/test_decode --gtest_filter='*LargeContexts*'
cat $R/progress.txt
