#!/usr/bin/env bash
# Session 33, run 2. carry [".gl", ".pk"]; packed on branch fresh-owner:
# `bash bench/pack_gpu.sh base=be64a93:turboprof,bench_append` (base: main).
# fresh-owner: in the fused turbo split's pair form, the split's last tile (the new token's) is
# subgroup 3's (tiles rotated), and subgroups 2 and 3 (no rows to quantize) issue their first
# tile's loads during the prologue; the fresh tile is patched after the barrier.
# Run 1 (diag-prostamp): turbo2's fresh split reaches its barrier at ~2.4 us (subgroup 0, the K
# quantizer, last), prologue ends ~3.3, then its one tile takes 1.5 us (owned by subgroup 0,
# whose loads went out only after the barrier).
# Expected: the tests pass; turbo2's fresh split no longer the last workgroup (or its tiles
# ~0.7 us instead of 1.5); turbo2 ratio_pct at 4K ~5 -> ~2-3%; turbo3 / turbo4 the same or a
# little lower.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
wait
tls turbo2,turbo3,turbo4 4097 base main
tls turbo2,turbo3 4150 base main
apps 3 turbo2,turbo3,turbo4 base main
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
