#!/usr/bin/env bash
# Session 15 run 4: the P1-P8 table at fb7d2a7 (935fbdd's kernels; the Vulkan memory model enabled
# for the tc kernels), test_decode_tc first (the tc variant still chosen and exact on the device).
# Binaries (build-slim) in .pk/bins.tar.xz.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
TKV_LOG=info timeout 120 build-slim/tests/test_decode_tc 2>&1 | grep -E "tc matrices|tc decode|^tc |PASSED|FAILED|SKIPPED|memory" | tee $OUT/t/test_decode_tc.txt | tail -12
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$OUT/t bash bench/run_targets.sh 2>&1 | tail -45
