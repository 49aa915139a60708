#!/usr/bin/env bash
# Session 36, run 4. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh (the tree's binaries).
# bench_decode's new axes (batch, M, variants) on the GPU: turbo3 and q8_0 at 8K and 128K, batch
# 1 and 16, M 1 and 8, the policy's variant; Google Benchmark's JSON and console table.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
TKV_BENCH_CTX=8k,128k TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_BATCH=1,16 TKV_BENCH_M=1,8 \
  timeout 300 build-slim/bench/bench_decode --benchmark_out=$R/bench_decode.json --benchmark_out_format=json \
  > $R/bench_decode.txt 2>&1
lg "bench_decode rc $?"
cat $R/progress.txt $R/device.txt; cut -c1-260 $R/bench_decode.txt | tail -22
