#!/usr/bin/env bash
# Prepared in session 42, not run (no device time left): touch (branch exp-touch,
# patches/touch-not-run.patch) against main. carry [".gl", ".pk"]; pack at main:
#   git checkout -q -b exp-touch && git apply bench/results/2026-11-29-session42/patches/touch-not-run.patch \
#     && git commit -qam "exp touch" && git checkout -q main
#   bash bench/pack_gpu.sh touch=exp-touch:bench_append,turboprof,test_append_decode
# Run 4 put P7's q8_0 cost in the steps whose fresh split gives a subgroup two tiles (8-13%,
# against ~1% with one). Runs 2-3 showed that a shorter prologue does not help: the split's tiles
# then take as long again. The tiles start late and wait on their own load latencies; for row
# types (no PREFETCH) each tile's V waits inside its iteration. touch: while the quantizer runs,
# the fresh split's other subgroups load one word of every 128-byte line of the split's tiles
# that are not a subgroup's first fetch. Those tiles then hit L1/L2 after the barrier.
# Prediction: C 4096 q8_0 ~12% -> ~5-7%, C 4161 ~9% -> ~4-5%; 128 steps q8_0 ~6.3% -> ~3.5-4.5%;
# turbo (PREFETCH: both tiles' loads already in flight together) less, ~0.5 point; C 4160
# (one tile a subgroup: nothing touched) even.
# Lavapipe runs no tc kernel, so this is untested: test_append_decode-touch runs first, and a
# failing build is not timed.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-touch 240 build-slim/tests/test_append_decode-touch
labels=main
passed app-touch && labels="$labels touch"
lg "timed: $labels"
tls q8_0,turbo3 4095 $labels
for c in 4096 4161 4160; do
  for l in $labels; do
    TKV_BENCH_TYPES=q8_0,turbo3,turbo2 TKV_BENCH_APPEND_CTX=$c TKV_BENCH_REPEAT=1 app append.txt "1 C$c $l" $l fused/llama8b
  done
done
lg steps
apps 2 q8_0,turbo3,turbo2 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
sed 's/iterations:3\/manual_time //' $R/append.txt | cut -c1-200
