#!/usr/bin/env bash
# Session 16 run 4 (H200): the P1-P8 table at the commit with the register quantizer and the
# fused tc plan's rule dropped (build-slim), run_targets.sh without its LargeContexts test step;
# then the fused step at 8K and 16K with the dropped rule (n3ms0: as committed) against it kept
# (new3: splits of at least 8 steps).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$OUT/t bash bench/run_targets.sh 2>&1 | tail -16
for ctx in 8k 16k; do
  for l in new3 n3ms0; do
    TKV_BENCH_APPEND_CTX=$ctx TKV_BENCH_TYPES=turbo3,turbo4 TKV_BENCH_APPEND_FORMATS=f32 timeout 60 build-ab/bench_append-$l --benchmark_filter='fused/' 2>&1 | grep -E "^fused/" | sed "s/^/$ctx $l /"
  done
done | tee $OUT/t/fused-8k16k.txt | awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^(decode_step_us|fused_step_us|ratio_pct)=/) x = x " " $i; print $1, $2, $3, x; x = ""}'
