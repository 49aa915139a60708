#!/usr/bin/env bash
# Session 18 run 11 (b59f0ef: f16 on the tensor cores by default): the GPU tests (test_decode,
# test_append_decode and test_timeline now run f16 on tc; test_cache), and f16 at short contexts,
# scalar kernel (TKV_VARIANT=smem: f16 ignores it) against the default (tc).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=/tmp/run11; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for tl in test_decode:180 test_append_decode:150 test_timeline:60 test_cache:60; do
  t=${tl%:*}; timeout ${tl#*:} build-slim/tests/$t --gtest_brief=1 > $R/$t.txt 2>&1; echo "$t rc $?" >> $R/tests.txt
done
for v in smem auto; do
  TKV_VARIANT=$v timeout 40 build-slim/profile/turboprof profile --types f16 --ctx 1k,4k,8k --modes 0 --repeat 10 2>&1 | grep -E '^f16|rror' | sed "s/^/$v /"
done > $R/profile.txt 2>&1
tar czf $OUT/run11.tar.gz -C /tmp run11
cat $R/tests.txt; tail -3 $R/test_*.txt; cut -c1-70 $R/profile.txt
