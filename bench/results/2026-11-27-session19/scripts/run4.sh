#!/usr/bin/env bash
# Session 19 run 4: rows' K one tile ahead (decode_tc.comp: a tile's V loaded at the top of its
# step, the next tile's K after its scores) against base (c2cc772), f16 and q8_0 (turbo3 as the
# control: its tiles keep the whole-tile prefetch), m 1 at 1K-128K, m 3 and m 8 at 32K, batch 16
# at 8K, two rounds, mode 0; test_decode_tc of head; the tc pipelines' registers.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head
R=/tmp/run4; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 100 build-ab/test_decode_tc > $R/tests.txt 2>&1
for round in 1 2; do
  for l in base head; do
    P=build-ab/turboprof-$l
    TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 $P profile --types f16,q8_0,turbo3 --ctx 1k,8k,32k,128k --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|Register|rror' | sed "s/^/$round $l /"
    for m in 3 8; do
      timeout 40 $P profile --types f16,q8_0 --ctx 32k --m $m --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0)|rror' | sed "s/^/$round $l-m$m /"
    done
    timeout 40 $P profile --types f16,q8_0 --ctx 8k --batch 16 --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0)|rror' | sed "s/^/$round $l-b16 /"
  done
done > $R/profile.txt 2>&1
grep -v Register $R/profile.txt > $R/times.txt; python3 bench/ab_summary.py $R/times.txt > $R/summary.txt 2>&1
tar czf $OUT/run4.tar.gz -C /tmp run4
grep -E "OK|FAILED|PASSED|Failure" $R/tests.txt | tail -12; cat $R/summary.txt
grep Register $R/profile.txt | grep "pipeline decode_tc" | grep -o "^[0-9] [a-z]*\|constants \[[0-9,]*\] Register Count = [0-9]*" | paste - - | sort -u | head -20
