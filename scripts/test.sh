#!/usr/bin/env bash
# Install what is missing, build, and run the default test suite (ctest label "quick").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# Under the Khronos validation layer (core + synchronization): a test during which the layer
# reports anything fails (tests/test_main.cpp). TKV_VALIDATION=0 runs without it.
export TKV_VALIDATION="${TKV_VALIDATION:-1}"
ctest --test-dir "${TKV_BUILD_DIR:-build}" -L quick --output-on-failure -j "$(nproc)" "$@"
