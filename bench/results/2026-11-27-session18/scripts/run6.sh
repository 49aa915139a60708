#!/usr/bin/env bash
# Session 18 run 6 (diagnostic): d2 = head whose plain timeline sets up its cache with the fused
# timeline's append room (a larger capacity, so possibly another number of rotated layers).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run6; mkdir -p $R
for round in 1 2; do
  for l in head d2; do
    for mode in "" --fused; do
      TKV_LOG=debug timeout 60 build-ab/turboprof-$l timeline $mode --types turbo3,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)|layers' | sed "s/^/$round $l timeline${mode:- plain} /"
    done
  done
done > $R/timeline.txt 2>&1
tar czf $OUT/run6.tar.gz -C /tmp run6
grep -E "(turbo3|f16) " $R/timeline.txt | cut -c1-150
