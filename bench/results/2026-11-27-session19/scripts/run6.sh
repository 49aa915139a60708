#!/usr/bin/env bash
# Session 19 run 6 (the last 270 s of device time): the final shader (rows' K one tile ahead, for
# every row type) through the fused append-decode tests and test_decode's type pairs and splits.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh
R=/tmp/run6; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 > $R/test_append_decode.txt 2>&1; echo "test_append_decode rc $?" >> $R/tests.txt
timeout 40 build-slim/tests/test_decode --gtest_brief=1 --gtest_filter='*EveryTypePair*:*SplitInvariance*' > $R/test_decode.txt 2>&1; echo "test_decode rc $?" >> $R/tests.txt
tar czf $OUT/run6.tar.gz -C /tmp run6
cat $R/tests.txt; tail -4 $R/test_*.txt
