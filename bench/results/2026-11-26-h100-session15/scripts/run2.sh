#!/usr/bin/env bash
# Session 15 run 2: the tail's fence (release/acquire instead of memoryBarrierBuffer's SC fence) and
# the tc kernel's first tile fetched before the prologue, A/B against HEAD (935fbdd), plus the
# correctness suites of the build with both. Binaries come packed in .pk/bins.tar.xz.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
mkdir -p $OUT/t
(for t in test_decode_tc test_timeline test_append_decode test_decode_modes; do timeout 200 build-slim/tests/$t --gtest_brief=1 2>&1 | tail -3; done
 timeout 200 build-slim/tests/test_decode --gtest_brief=1 2>&1 | tail -3) > $OUT/t/tests.txt 2>&1 &
tests=$!
wait $tests
cat $OUT/t/tests.txt
# SASS of the tail: which fence each build's tc and native kernels got
for l in base fence; do
  TKV_CACHE_DIR=/tmp/c-$l build-ab/turboprof-$l profile --types turbo3,f16 --ctx 8k --modes 0 --repeat 3 >/dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sass-$l /tmp/c-$l >/dev/null 2>&1
  for f in /tmp/sass-$l/*.sass; do echo "$l $(basename $f): $(grep -c HMMA $f) HMMA; $(grep -oE 'MEMBAR[.A-Z]*' $f | sort | uniq -c | tr '\n' ' ')"; done
done | tee $OUT/t/fences.txt
for round in 1 2 3; do
  for l in base early fence both; do
    build-ab/turboprof-$l timeline --types turbo3,turbo2,f16 --ctx 1k,8k,32k --repeat 20 2>&1 | grep -E '^(f16|turbo)' | sed "s/^/$round $l /"
  done
done > $OUT/t/timeline-ab.txt
for round in 1 2 3; do
  for l in base early fence both; do
    build-ab/turboprof-$l profile --workload llama8b --ctx 1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
awk '{k=$2" "$3" "$5; a[k]=a[k]" "$8"/"$9"/"$11"/"$12"/"$14"/"$15}END{for(k in a)print k, a[k]}' $OUT/t/timeline-ab.txt | sort -k2,2 -k3,3 -k1,1 > $OUT/t/timeline-summary.txt
