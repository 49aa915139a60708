#!/usr/bin/env bash
# Session 16 run 3 (H200): the fused step of new3 (run 2) with the fused tc plan's shortest split
# (kTensorCoreFusedMinSteps) at 8 (new3, as committed), 4, 2 and 0 (n3ms4, n3ms2, n3ms0), two
# rounds, every type, f32 rows.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-final
mkdir -p $OUT/t
for round in 1 2; do
  for l in new3 n3ms4 n3ms2 n3ms0; do
    TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-$l --benchmark_filter='fused/' 2>&1 | grep -E "^fused/" | sed "s/^/$round $l /"
  done
done | tee $OUT/t/fused.txt | awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^(decode_step_us|fused_step_us|ratio_pct)=/) x = x " " $i; print $1, $2, $3, x; x = ""}'
