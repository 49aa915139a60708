#!/usr/bin/env bash
# Session 16 run 2 (H200): new3 = the subgroup register quantizer with its branches and loops
# uniform per subgroup (no MATCH.ANY convergence checks around the shuffles), the tail's scores a
# subgroup per (row, K row). GPU tests of new3; then append and fused step of base (5e3ca9c) and
# new3 for every type (f32 rows), and each pipeline's MATCH.ANY / SHFL counts (SASS).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-final
mkdir -p $OUT/t
(timeout 100 build-slim/tests/test_decode_tc 2>&1 | grep -E "PASSED|FAILED"
 timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 2>&1 | tail -4
 timeout 60 build-slim/tests/test_cache --gtest_brief=1 --gtest_filter='*Quantize*:*Golden*' 2>&1 | tail -3) | tee $OUT/t/tests.txt
for l in base new3; do
  export TKV_CACHE_DIR=/tmp/pc-$l
  TKV_BENCH_APPEND_FORMATS=f32 timeout 150 build-ab/bench_append-$l --benchmark_filter='append/|fused/' 2>&1 | grep -E "^(append|fused)/" | sed "s/^/$l /"
  python3 bench/sass_dump.py /tmp/s-$l /tmp/pc-$l >/dev/null 2>&1
  for f in /tmp/s-$l/*.sass; do echo "$l sass $(basename $f) $(grep -c MATCH.ANY $f) match $(grep -c SHFL $f) shfl $(grep -cE '^\s+/\*[0-9a-f]+\*/' $f) instr"; done
done | tee $OUT/t/append.txt | cut -c1-230
