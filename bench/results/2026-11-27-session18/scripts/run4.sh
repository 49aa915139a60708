#!/usr/bin/env bash
# Session 18 run 4 (diagnostic): why a fused call's splits take ~1 us longer in their tiles at 4K.
# d1 = head with the tails skipped at run time (`if (pc.zero == 12345u) append_tail(...)`: the
# same code, the tails do nothing; outputs wrong, the splits' stamps valid).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run4; mkdir -p $R
for round in 1 2; do
  for l in head d1; do
    for mode in "" --fused; do
      timeout 60 build-ab/turboprof-$l timeline $mode --types turbo3,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | sed "s/^/$round $l timeline${mode:- plain} /"
    done
  done
done > $R/timeline.txt 2>&1
tar czf $OUT/run4.tar.gz -C /tmp run4
cat $R/timeline.txt
