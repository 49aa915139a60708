#!/usr/bin/env bash
# carry [".gl", ".pk"]; packed on branch ef-main (early-first-fetch, 3f867a3, cherry-picked onto
# main 9a6d280 as 0741a4e): `bash bench/pack_gpu.sh`
# The tc and fused-append tests on the GPU (not yet run for this change), then the P1-P8 table
# without its tests and peer steps (P4 has no PyTorch 128K row then).
# Expected (session 33 run 5): 4K decode steps turbo2 373 -> 366 us, turbo4 431 -> 416; P2 near
# its bound (1.10-1.11x); P7's fused steps unchanged, so turbo4's ratio ~2 -> ~5-6%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
wait
# (the prelude's targets helper, with the peer step skipped too)
TKV_TARGETS_SKIP=tests,peer TKV_TARGETS_STEP_TIMEOUT=150 TKV_TARGETS_BUDGET=330 TKV_BUILD=build-slim OUT=$R/t \
  timeout 342 bash bench/run_targets.sh > "$R/targets-run.txt" 2>&1
lg "targets rc $?"
cp "$R/t/targets.txt" "$R/targets.txt" 2>/dev/null
cp "$R/t/targets.tar.gz" "$R/targets-inputs.tar.gz" 2>/dev/null; rm -rf "$R/t"
sed -n '/^target/,/targets met/p' "$R/targets.txt"
cat "$R/progress.txt"
