#!/usr/bin/env bash
# Session 18 run 7 (diagnostic): d5 = head with the tail code left out of the fused kernels (grid,
# bindings and push constants as fused; no tail code, so registers and shared memory as plain).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run7; mkdir -p $R
for round in 1 2; do
  for l in head d5; do
    for mode in "" --fused; do
      TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-ab/turboprof-$l timeline $mode --types turbo3,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)|decode' | sed "s/^/$round $l timeline${mode:- plain} /"
    done
  done
done > $R/timeline.txt 2>&1
tar czf $OUT/run7.tar.gz -C /tmp run7
grep -E "(turbo3|f16) " $R/timeline.txt | cut -c1-150; grep -o "pipeline decode[a-z_]* .*Register Count = [0-9]*\|Shared Memory Size = [0-9]*" $R/timeline.txt | sort -u | cut -c1-40,100-
