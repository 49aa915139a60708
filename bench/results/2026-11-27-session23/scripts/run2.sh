#!/usr/bin/env bash
# Session 23, GPU call 2 (the same pack as run1.sh): what call 1 did not reach before its limit
# (its tests took 385 s cold). Fused append-decode, main against branch fused-tail-alias, m 2 and 8
# (call 1 measured m 1 only for the branch: no gain at 128K, where it plans 48 splits in 3 an SM
# against main's 32 in 2), two rounds; bench_append's fused rows (P7's measure) for both; then
# rows16-qrows8 against main at m 3 and 8 (m 1 runs no changed code).
source bench/gpu_prelude.sh
source bench/results/2026-11-27-session23/scripts/ab.sh
fused_timelines "main fused" "2 8"
fused_append "main fused"
qrows8_ab "3 8"
cat $R/progress.txt
