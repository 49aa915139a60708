#!/usr/bin/env bash
# Session 15 run 5: two small changes to the tc kernel's fixed cost, A/B of turboprof builds from
# fb7d2a7: base; tabfirst (the tables built while the query rows load, before their Hadamard);
# mweights (the subgroups' merge weights computed once per row, not per element); both; diag
# (base with the 'arrival' stamp before the fence and count, so the timeline's arrival column is
# the subgroups' merge and the partials' stores alone, and its merge column adds fence + count).
# test_decode_tc and test_append_decode of `both` first. Binaries in .pk/bins.tar.xz.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-base
mkdir -p $OUT/t
(timeout 60 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |PASSED|FAILED"; timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -3) | tee $OUT/t/tests.txt | tail -6
for round in 1 2; do
  for l in base tabfirst mweights both diag; do
    build-ab/turboprof-$l timeline --types turbo3,turbo2 --ctx 1k,8k,32k --repeat 20 2>&1 | grep -E '^turbo' | sed "s/^/$round $l /"
  done
done > $OUT/t/timeline-ab.txt
awk '{k=$2" "$3" "$5; a[k]=a[k]" "$8"/"$9"/"$11"/"$12"/"$14"/"$15}END{for(k in a)print k, a[k]}' $OUT/t/timeline-ab.txt | sort -k2,2 -k3,3 -k1,1 | tee $OUT/t/timeline-summary.txt
for round in 1 2 3; do
  for l in base tabfirst mweights both; do
    build-ab/turboprof-$l profile --workload llama8b --types turbo2,turbo3,turbo4 --ctx 1k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E '^turbo' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
