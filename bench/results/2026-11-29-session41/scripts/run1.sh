#!/usr/bin/env bash
# Prepared in session 40, not run (no device time left). carry [".gl", ".pk"]; pack at main with
# the experiment as a label:
#   git checkout -b exp-restrict && git apply bench/results/2026-11-29-session40/patches/fused-restrict-not-run.patch \
#     && git commit -qam "exp fused-restrict" && git checkout main
#   bash bench/pack_gpu.sh restrict=exp-restrict:bench_append,test_append_decode
# P7 turbo4: the fused call with the 256-entry plan runs its tiles 37% slower than the decode call
# with the same plan (runs 5-6), its merge 80% slower; with the 64-entry plan (two workgroups an
# SM) the fused tiles are 8% slower. One workgroup an SM hides no stall of its own, so suspect a
# latency the plain pipeline hides and the fused one exposes: the fused pipeline also binds the
# pools writable (bindings 10, 11), so the driver may not schedule the plain views' loads as it
# does in decode_tc (their form is the same, LDG.E.CONSTANT, in session 33's fused SASS of the
# 64-entry plan). Or register spills, or a longer loop in the 256-entry fused pipeline alone.
# 1. The machine code of both pipelines of bench_append's turbo4 and turbo3 fused rows (its decode
#    way builds decode_tc, its fused way decode_tc_append, one plan each), through
#    bench/sass_loop.py: registers, STL/LDL, steady path, and the loads' form (LDG.E.CONSTANT or
#    not) in `sass_loop.py --list`'s output if needed.
# 2. fused-restrict (the plain views declared restrict in decode_tc_append) against main: P7's
#    rows for turbo4 and turbo3, two rounds. Prediction if the aliasing is the cause: turbo4
#    ~11% -> ~3-4%, turbo3 3.5% -> ~2.5%; else no change. (test_append_decode of the experiment
#    runs beside the SASS dumps, whose timings do not matter.)
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-restrict 240 build-slim/tests/test_append_decode-restrict &  # (its fused tc kernel's correctness)
export TKV_BENCH_APPEND_FORMATS=f16 TKV_BENCH_REPEAT=8
for t in turbo4 turbo3; do
  TKV_BENCH_TYPES=$t SASS_BIN=build-slim/bench/bench_append loops "$t" main --benchmark_filter=fused/llama8b/$t/f16
  TKV_BENCH_TYPES=$t SASS_BIN=build-slim/bench/bench_append loops "$t-r" restrict --benchmark_filter=fused/llama8b/$t/f16
done
lg loops
wait
unset TKV_BENCH_APPEND_FORMATS TKV_BENCH_REPEAT
apps 2 turbo4,turbo3 main restrict
cat $R/progress.txt $R/device.txt
grep -E "^==|local memory|steady path|pipes" $R/loops.txt
append_summary
