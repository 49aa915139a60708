#!/usr/bin/env bash
# Session 17 run 2: what the wide form's split plan costs. The new build of run 1 (same binaries):
# its pipelines' registers, the exactness test's printed errors at m = 1 and 2, and forced split
# counts (TKV_SPLITS) at m = 8 32K, m = 2 8K and qwen7b 8K. One output file.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-new
mkdir -p $OUT/r
{
timeout 40 build-slim/tests/test_decode_tc --gtest_filter='*EveryTurboPairIsExact*' 2>&1 | grep -E "^tc |OK|FAILED|PASSED"
for s in "" 8 16; do
  TKV_SPLITS=$s TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 30 build-ab/turboprof-new profile --types turbo3,turbo2,turbo4 --ctx 32k --m 8 --modes 0 --repeat 10 2>&1 | grep -E "^turbo|decode_tc with" | sed -E "s/^(turbo)/m8 splits${s:-plan} \1/; s/.*built pipeline (decode_tc with constants \[[0-9,]*\]) (Register Count = [0-9]+).*(Shared Memory Size = [0-9]+)/\1 \2 \3/"
done
for s in "" 16 24; do
  TKV_SPLITS=$s timeout 25 build-ab/turboprof-new profile --types turbo3,turbo4 --ctx 8k --m 2 --modes 0 --repeat 10 2>&1 | grep -E "^turbo" | sed "s/^/m2 splits${s:-plan} /"
  TKV_SPLITS=$s timeout 25 build-ab/turboprof-new profile --workload qwen7b --types turbo3 --ctx 8k --modes 0 --repeat 10 2>&1 | grep -E "^turbo" | sed "s/^/qwen splits${s:-plan} /"
done
} > $OUT/r/run2.txt 2>&1
cat $OUT/r/run2.txt
