#!/usr/bin/env bash
# Prepared for the next GPU session (not run in session 17: no device time left). One call, about
# 6-8 minutes; everything in one tarball ($OUT/next.tar.gz: at most 8 files come back).
# Binaries, built on the CI machine and carried in .pk/bins.tar.xz:
#   build-slim/tests/{test_decode_tc,test_timeline,test_append_decode}  (HEAD)
#   build-ab/turboprof-base (74411fe), build-ab/turboprof-head (HEAD)
# 1. the GPU tests of session 17's code: test_decode_tc (wide tc workgroups), test_timeline (the
#    tc kernel's fused stamps), AppendDecode.EveryVariant (left unfinished in run 1);
# 2. the committed plan against base in one run (run 3 of session 17, refused then): m 1/2/3/8 at
#    8K and 32K, qwen7b at 8K and 32K, turbo2/3/4;
# 3. P7's fused cost: turboprof timeline --fused against the plain timeline at 4K, every type.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/next; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
{ timeout 120 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |OK|FAILED|PASSED|Failure"
  timeout 90 build-slim/tests/test_timeline 2>&1 | grep -E "OK|FAILED|PASSED|SKIPPED|Failure"
  timeout 90 build-slim/tests/test_append_decode --gtest_filter='AppendDecode.EveryVariant' 2>&1 | grep -E "OK|FAILED|PASSED|Failure"
} > $R/tests.txt 2>&1
for round in 1 2; do
  for l in base head; do
    for m in 1 2 3 8; do
      timeout 30 build-ab/turboprof-$l profile --types turbo3,turbo4,turbo2 --ctx 8k,32k --m $m --modes 0 --repeat 10 2>/dev/null | grep -E '^turbo' | awk -v r=$round -v l=$l -v m=$m '{print r, l, "m" m, $1, $4, $5}'
    done
    timeout 25 build-ab/turboprof-$l profile --workload qwen7b --types turbo3,turbo4 --ctx 8k,32k --modes 0 --repeat 10 2>/dev/null | grep -E '^turbo' | awk -v r=$round -v l=$l '{print r, l, "qwen", $1, $4, $5}'
  done
done > $R/ab.txt
for mode in "" --fused; do
  timeout 100 build-ab/turboprof-head timeline $mode --types turbo3,turbo4,turbo2,q8_0,f16 --ctx 4k --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | sed "s/^/timeline${mode:- plain} /"
done > $R/timeline.txt
tar czf $OUT/next.tar.gz -C /tmp next
cat $R/tests.txt | tail -8; cat $R/timeline.txt
