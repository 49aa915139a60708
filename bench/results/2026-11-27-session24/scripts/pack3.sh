#!/usr/bin/env bash
# The pack of run3.sh: main's binaries plus turboprof and bench_append at branch fused-third-slot.
set -euo pipefail
bash bench/pack_gpu.sh third=fused-third-slot:turboprof,bench_append
