#!/usr/bin/env bash
# Prepared in session 42, not run (no device time left): touch and touchall against main, one call
# (~8 minutes). carry [".gl", ".pk"]; pack at main:
#   for e in touch touchall; do git checkout -q -b exp-$e && git apply \
#     bench/results/2026-11-29-session42/patches/$e-not-run.patch && git commit -qam "exp $e" && git checkout -q main; done
#   bash bench/pack_gpu.sh touch=exp-touch:bench_append,turboprof,test_append_decode \
#     touchall=exp-touchall:bench_append,turboprof,test_append_decode
# Run 4 put P7's q8_0 cost in the steps whose fresh split gives a subgroup two tiles (8-13%,
# against ~1% with one). Runs 2-3 showed that a shorter prologue does not help: the split's tiles
# then take as long again. The tiles start late and wait on their own load latencies; for row
# types (no PREFETCH) each tile's V waits inside its iteration. touch: while the quantizer runs,
# the fresh split's other subgroups load one word of every 128-byte line of the split's tiles
# that are not a subgroup's first fetch. touchall: of every tile of the split, first fetches
# (and the new tokens' tiles) too. The touched tiles then hit the caches after the barrier.
# Prediction: touch: C 4096 q8_0 ~12% -> ~5-7%, C 4161 ~9% -> ~4-5%, 128 steps q8_0 ~6.3% ->
# ~3.5-4.5%; turbo (PREFETCH: both tiles' loads already in flight together) ~0.5 point; C 4160
# (one tile a subgroup: nothing touched) even. touchall: another ~1 point off C 4096 and C 4161
# (the first tile's latency too), and C 4160 lower as well.
# Lavapipe runs no tc kernel, so both are untested: their test_append_decode runs first, and a
# build that fails it is not timed.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tested test_append_decode 240 touch touchall
labels=$LABELS
tls q8_0,turbo3 4095 $labels
for c in 4096 4161 4160; do
  for l in $labels; do
    TKV_BENCH_TYPES=q8_0,turbo3 TKV_BENCH_APPEND_CTX=$c TKV_BENCH_REPEAT=1 app append.txt "1 C$c $l" $l fused/llama8b
  done
done
lg steps
apps 2 q8_0,turbo3 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
sed 's/iterations:3\/manual_time //' $R/append.txt | cut -c1-200
