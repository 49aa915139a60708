#!/usr/bin/env bash
# Session 18 run 8 (diagnostic): at 4096 old tokens every fused call's new token needs a new page
# (a page-table update and a barrier before the dispatch); at 4000 none does. Timelines plain and
# fused at both, and bench_append's fused rows (P7) at both.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run8; mkdir -p $R
for round in 1 2; do
  for mode in "" --fused; do
    timeout 60 build-ab/turboprof-head timeline $mode --types turbo3,f16 --ctx 4000,4096 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | sed "s/^/$round timeline${mode:- plain} /"
  done
done > $R/timeline.txt 2>&1
for ctx in 4000 4096; do
  TKV_BENCH_APPEND_CTX=$ctx TKV_BENCH_APPEND_FORMATS=f32 timeout 100 build-ab/bench_append-head --benchmark_filter='fused/' \
    --benchmark_out=$R/append-$ctx.json --benchmark_out_format=json > $R/append-$ctx.txt 2>&1
done
tar czf $OUT/run8.tar.gz -C /tmp run8
cut -c1-150 $R/timeline.txt
for f in $R/append-*.txt; do echo $f; grep -o "fused/llama8b/[a-z0-9_]*/f32\|decode_step_us=[0-9.]*\|fused_step_us=[0-9.]*\|ratio_pct=[0-9.]*" $f | paste - - - - ; done
