#!/usr/bin/env bash
# Prepared in session 40, not run (no device time left). carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh
# P7 turbo4: the fused call with the 256-entry plan runs its tiles 37% slower than the decode call
# with the same plan (runs 5-6), its merge 80% slower. Suspect: register spills in
# decode_tc_append at 256 invocations (a cap that lets two workgroups an SM), or a loop that
# lost the 256-entry table's merged reads. The machine code of both pipelines of bench_append's
# turbo4 fused row (its decode way builds decode_tc, its fused way decode_tc_append, one plan),
# through bench/sass_loop.py (registers, STL/LDL in the pipeline and the loop, steady path).
# Prediction if spills: STL/LDL > 0 in decode_tc_append alone; if not, a steady path ~200
# instructions longer than decode_tc's 575.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
export TKV_BENCH_TYPES=turbo4 TKV_BENCH_APPEND_FORMATS=f16 TKV_BENCH_REPEAT=8
SASS_BIN=build-slim/bench/bench_append loops fused main --benchmark_filter=fused/llama8b/turbo4/f16
export TKV_BENCH_TYPES=turbo3
SASS_BIN=build-slim/bench/bench_append loops fused3 main --benchmark_filter=fused/llama8b/turbo3/f16
lg loops
grep -E "^==|local memory|steady path|pipes" $R/loops.txt
