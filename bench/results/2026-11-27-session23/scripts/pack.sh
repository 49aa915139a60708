#!/usr/bin/env bash
# Session 23's pack (calls 1 and 2): main's binaries plus, built at other commits and named
# <binary>-<label>: c1a6180 (before the plan counted the fused tail's shared memory): turboprof,
# bench_append; branch fused-tail-alias: turboprof, bench_append, test_append_decode; branch
# rows16-qrows8: turboprof, test_decode_tc. (As it ran, through bench/pack_gpu.sh's arguments.)
set -euo pipefail
bash bench/pack_gpu.sh c1a6180=c1a6180:turboprof,bench_append fused=fused-tail-alias:turboprof,bench_append,test_append_decode \
  qrows8=rows16-qrows8:turboprof,test_decode_tc
