#!/usr/bin/env bash
# The pack of next.sh: main's binaries plus turboprof, bench_append and test_append_decode built
# at branches merge-batch17 and tail-copies.
set -euo pipefail
bash bench/pack_gpu.sh merge17=merge-batch17:turboprof,bench_append,test_append_decode \
  copies=tail-copies:turboprof,test_append_decode
