#!/usr/bin/env bash
# Session 16 run 7 (H200): the P1-P8 table at 4adce20 (the one quantizer), run_targets.sh without
# its LargeContexts test step (the GPU tests of this build passed in run 6).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$OUT/t bash bench/run_targets.sh 2>&1 | tail -16
