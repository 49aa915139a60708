#!/usr/bin/env bash
# (Session 33 wrote this as its scripts/run6.sh; session 34 ran it as its first call, run1.)
# For session 34's first call (not run in session 33: its device time was spent). carry [".gl",
# ".pk"]; packed at the end of session 33 on branch nt-slot (2be1ea1):
# `bash bench/pack_gpu.sh base=be64a93:turboprof,bench_append`
# main = nt-slot: in the fused turbo split's pair form, the new tokens are attended outside the
# tiles (scores from the fresh words by the query subgroups, one more state in the subgroups'
# merge), and subgroups 0 and 1 store the new bits into the pool after the prologue; at 4097
# tokens the fresh split has no tile. base = main be64a93.
# Runs 3-4: the fresh split's one tile costs ~2 us after its prologue (~1.3 us of rebuild in one
# subgroup, ~0.75 of the tile's chain in one warp) and ends the call for turbo2.
# Expected: the tests pass (outputs within the exact bound; the stored rows byte-equal to an
# append then a decode); the fresh split ends ~1 us earlier, no longer the call's last; turbo2
# ratio_pct ~5 -> ~1-3%, turbo3 / turbo4 ~2 -> ~0-2%. At 4150 (old tiles in the fresh split) no
# worse.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
fused_ab 2 base main
