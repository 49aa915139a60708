#!/usr/bin/env bash
# Install what is missing, build, and run the default test suite (ctest label "quick").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir "${TKV_BUILD_DIR:-build}" -L quick --output-on-failure -j "$(nproc)" "$@"
