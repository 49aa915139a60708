#!/usr/bin/env bash
# Prepared for the next GPU session (branch fused-tail-alias; not run in session 22). On the
# branch: `scripts/pack-commits.sh c1a6180 0b0c12d` (c1a6180: before the plan counted the fused
# tail's shared memory; 0b0c12d: main with it; the branch: the tail's arrays moved into the tc
# kernel's region), carry [".gl", ".pk"].
# A fused append-decode dispatch compiles the tail's quantizer arrays (~4.3 KB) into every
# workgroup. Until 0b0c12d the plan did not count them: m 1 at 128K put three 16.8 KB
# workgroups an SM (two fit), the wide form (m 2) two of 27.3 KB (one fits): a second wave.
# Expected: c1a6180 -> 0b0c12d: `late` workgroups gone, m 2 32K fused faster (one wave of one an
# SM against two waves), m 1 128K faster; 0b0c12d -> branch: the plain kernel's occupancy back
# (two an SM for the wide form, three for m 1 at 128K): faster again. At 4K m 1 (P7) all fit two
# an SM: no change expected from the plan; the branch may still move P7 (less shared memory,
# more L1), which bench_append measures.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS; P=build-slim/profile/turboprof
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
timeout 200 build-slim/tests/test_append_decode > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_append_decode.txt | head -20 >> $R/progress.txt
for c in c1a6180 0b0c12d new; do
  B=$P-$c; [ $c = new ] && B=$P
  for m in 1 2 8; do
    ctx=4k,32k,128k; [ $m = 8 ] && ctx=4k,32k
    TKV_CACHE_DIR=/tmp/tkv-$c timeout 60 $B timeline --fused --types turbo3,q8_0,f16 --ctx $ctx --m $m --repeat 5 2>&1 |
      grep -E "^(turbo|q8_0|f16|type)|rror" | sed "s/^/$c m$m /" >> $R/timeline.txt
  done
  lg "timeline $c"
done
for c in c1a6180 0b0c12d new; do
  A=build-slim/bench/bench_append-$c; [ $c = new ] && A=build-slim/bench/bench_append
  TKV_CACHE_DIR=/tmp/tkv-$c TKV_BENCH_APPEND_FORMATS=f16 timeout 90 $A --benchmark_filter='fused' 2>&1 |
    grep -E "fused|rror" | sed "s/^/$c /" >> $R/append.txt
  lg "bench_append $c"
done
cat $R/progress.txt; cat $R/timeline.txt | grep -v " type "; cat $R/append.txt
