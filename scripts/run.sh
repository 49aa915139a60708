#!/usr/bin/env bash
# The main job: install what is missing, build, and profile decode attention over the
# compressed cache on the best Vulkan device present (the CPU driver, lavapipe, when there is no
# GPU). Extra arguments go to `turboprof profile`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec "${TKV_BUILD_DIR:-build}/profile/turboprof" profile --workload llama8b "$@"
