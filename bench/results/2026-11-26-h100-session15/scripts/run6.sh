#!/usr/bin/env bash
# Session 15 run 6: the splits' partials stored a vec4 at a time (vec4: a quarter of the stores,
# tc and native kernels) against base (1f1f7c8); basediag / vec4diag: the same with the timeline's
# 'arrival' stamp before the fence and count (arrival = the subgroups' merge and the stores alone;
# merge = fence + count + merge). test_decode_tc and test_append_decode of vec4 first.
# (Run 5 found the stores-and-merge part at ~2.4 us, the fence and count at ~1 us.)
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-base
mkdir -p $OUT/t
(timeout 60 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |PASSED|FAILED"; timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -3) | tee $OUT/t/tests.txt | tail -6
for round in 1 2; do
  for l in base vec4 basediag vec4diag; do
    build-ab/turboprof-$l timeline --types turbo3,turbo2,f16,q8_0 --ctx 1k,8k,32k --repeat 20 2>&1 | grep -E '^(turbo|f16|q8)' | sed "s/^/$round $l /"
  done
done > $OUT/t/timeline-ab.txt
awk '{k=$2" "$3" "$5; a[k]=a[k]" "$8"/"$9"/"$11"/"$12"/"$14"/"$15}END{for(k in a)print k, a[k]}' $OUT/t/timeline-ab.txt | sort -k2,2 -k3,3 -k1,1 | tee $OUT/t/timeline-summary.txt
for round in 1 2; do
  for l in base vec4; do
    build-ab/turboprof-$l profile --workload llama8b --ctx 1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
