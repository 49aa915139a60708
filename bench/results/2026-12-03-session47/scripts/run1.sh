#!/usr/bin/env bash
# Session 47, run 1: main's test_decode whole on the GPU (session 46's run 2 gave it 110 s and
# it ran out after 6 of 10 tests, all passed: SampledGrid took 83 s against 68-73 before), then
# P7's spread at main after q8magic (aafb3c2): three rounds of bench_append's fused llama8b rows,
# every type. Run 2's table read q8_0 3.16 / 3.26% (f32 / f16 rows), against 6.1-6.9% over
# session 45's six readings; turbo3 3.76 / 5.59%. carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh. Expected: test_decode 10 of 10 (LargeContexts skipped, as before);
# if q8magic moved q8_0's fused step, q8_0 within 2.5-4.5% in every round; if run 2's reading
# was noise, 5-7% again. turbo3 3-6%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst decode 240 build-slim/tests/test_decode
apps 3 f16,q8_0,turbo2,turbo3,turbo4 main
cat $R/progress.txt $R/device.txt
append_summary
