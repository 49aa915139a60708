#!/usr/bin/env bash
# Configures and builds turbokv (Release) into build/ (or $TKV_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TKV_BUILD_DIR:-build}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir" --parallel "$(nproc)"
