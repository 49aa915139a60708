#!/usr/bin/env bash
# Session 18 run 2: P7 after b4a5198 (the fused call's splits planned on the old tokens) against
# 866dddc: bench_append's fused rows (f32 new rows, 4K, every type), two rounds; and the fused
# timeline of the head at 4K.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for round in 1 2; do
  for l in base head; do
    TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-$l --benchmark_filter='fused/' \
      --benchmark_out=$R/append-$l-$round.json --benchmark_out_format=json > $R/append-$l-$round.txt 2>&1
  done
done
# (the first attempt of this run lacked libbenchmark: its timeline part, turbo3 4K fused with 32
# splits, read tiles 3.62 us as with 22; so: plain, fused, plain in a row, and the registers)
for mode in "" --fused "" --fused; do
  TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-ab/turboprof-head timeline $mode --types turbo3,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)|regist|pipeline' | sed "s/^/timeline${mode:- plain} /"
done > $R/timeline.txt 2>&1
tar czf $OUT/run2.tar.gz -C /tmp run2
grep -h "fused/" $R/append-*.txt | head -40
