#!/usr/bin/env bash
# The pack of next.sh: main's binaries plus, built at branch merge-batch17, turboprof,
# bench_append, test_append_decode and test_decode_tc; at branch tail-copies, turboprof and
# test_append_decode.
set -euo pipefail
bash bench/pack_gpu.sh merge17=merge-batch17:turboprof,bench_append,test_append_decode,test_decode_tc \
  copies=tail-copies:turboprof,test_append_decode
