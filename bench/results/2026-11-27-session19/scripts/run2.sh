#!/usr/bin/env bash
# Session 19 run 2 (q8_0 on the tensor cores by default): the GPU tests that run the default
# policy (test_decode, test_append_decode, test_timeline, test_cache) and test_decode_tc whole.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=/tmp/run2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for tl in test_decode_tc:60 test_decode:180 test_append_decode:170 test_timeline:60 test_cache:60; do
  t=${tl%:*}; timeout ${tl#*:} build-slim/tests/$t --gtest_brief=1 > $R/$t.txt 2>&1; echo "$t rc $?" >> $R/tests.txt
done
tar czf $OUT/run2.tar.gz -C /tmp run2
cat $R/tests.txt; tail -3 $R/test_*.txt
