#!/usr/bin/env bash
# Prepared for the next GPU session (branch q8-tc, not run in session 18: no device time left).
# q8_0 rows on the tensor cores: test_decode_tc (RowTypesAreExact: q8_0 pairs, head dims 128 and
# 64, m 1 and 2, GQA 7 m 3 with softcap and window), then q8_0 scalar kernel against
# TKV_VARIANT=tc (mode 0 only: tc offers modes 0 and 1), m 1/2/3/8 at 8K and 32K, 1K and 4K,
# batch 16 at 8K, two rounds, with the tc pipelines' registers.
# Binaries from the branch's build, carried in .pk/bins.tar.xz: build-slim/tests/test_decode_tc,
# build-slim/profile/turboprof.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=/tmp/q8; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 200 build-slim/tests/test_decode_tc > $R/tests.txt 2>&1
for round in 1 2; do
  for v in smem tc; do
    for m in 1 2 3 8; do
      TKV_VARIANT=$v TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 40 build-slim/profile/turboprof profile --types q8_0 \
        --ctx 1k,4k,8k,32k --m $m --modes 0 --repeat 10 2>&1 | grep -E '^q8_0|Register|rror' | sed "s/^/$round $v m$m /"
    done
    TKV_VARIANT=$v timeout 40 build-slim/profile/turboprof profile --types q8_0 --ctx 8k --batch 16 --modes 0 \
      --repeat 10 2>&1 | grep -E '^q8_0|rror' | sed "s/^/$round $v b16 /"
  done
done > $R/profile.txt 2>&1
tar czf $OUT/q8.tar.gz -C /tmp q8
grep -E "^tc |OK|FAILED|PASSED|Failure" $R/tests.txt | tail -30; grep -v Register $R/profile.txt | cut -c1-70
