#!/usr/bin/env bash
# Session 40, run 6 (run 4's pack). Run 5's fused timelines at --ctx 4096 / 4097 attend 4097 / 4098
# tokens (a cache of ctx tokens, one appended): both the 64-entry plan. bench_append's fused way
# (run 4) attends 4096: the 256-entry plan. Its timeline: fused at --ctx 4095, beside plain 4096.
source bench/gpu_prelude.sh
tl tl.txt "fused 4095" main --fused --types turbo4 --ctx 4095 --repeat 20
tl tl.txt "plain 4096" main --types turbo4 --ctx 4096 --repeat 20
lg tl
cut -c1-300 $R/tl.txt
