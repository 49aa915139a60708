#!/usr/bin/env bash
# The pack of run1.sh: the tree (branch merge-weights) plus turboprof at main 4a2d3b9 as "base".
set -euo pipefail
bash bench/pack_gpu.sh base=4a2d3b9:turboprof
