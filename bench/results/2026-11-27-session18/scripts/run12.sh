#!/usr/bin/env bash
# Session 18 run 12 (H100): the P1-P8 table at b59f0ef (f16 on the tensor cores by default; the
# fused splits planned on the old tokens), run_targets.sh without its LargeContexts step (run 11
# ran test_decode whole on this build: passed).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$OUT/t bash bench/run_targets.sh 2>&1 | tail -16
