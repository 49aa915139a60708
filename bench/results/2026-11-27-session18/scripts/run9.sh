#!/usr/bin/env bash
# Session 18 run 9: f16 rows on the tensor cores (tc). test_decode_tc (F16RowsAreExact and the
# rest); f16 decode, scalar kernel ("native") against tc (TKV_VARIANT=tc), m 1/2/3/8 at 8K and
# 32K, batch 16 at 8K (P8), two rounds; the tc pipelines' registers.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run9; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 200 build-slim/tests/test_decode_tc > $R/tests.txt 2>&1
for round in 1 2; do
  for v in native tc; do
    e=""; [ $v = tc ] && e="TKV_VARIANT=tc"
    for m in 1 2 3 8; do
      env $e TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 40 build-ab/turboprof-head profile --types f16 --ctx 8k,32k --m $m --repeat 10 2>&1 | grep -E '^f16|Register' | sed "s/^/$round $v m$m /"
    done
    env $e timeout 40 build-ab/turboprof-head profile --types f16 --ctx 8k --batch 16 --repeat 10 2>&1 | grep -E '^f16' | sed "s/^/$round $v b16 /"
  done
done > $R/profile.txt 2>&1
tar czf $OUT/run9.tar.gz -C /tmp run9
grep -E "^tc |OK|FAILED|PASSED|Failure|rror" $R/tests.txt | head -40; grep -v Register $R/profile.txt; grep -o "decode[a-z_]* with constants \[[0-9,]*\] Register Count = [0-9]*" $R/profile.txt | sort -u
