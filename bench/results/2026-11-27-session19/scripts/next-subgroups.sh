#!/usr/bin/env bash
# Prepared for the next GPU session (branch tc-subgroups, not run in session 19: no device time
# left). The tc kernel's workgroups of 6 or 8 subgroups (TKV_SUBGROUPS; 4 is the default): where
# the plan gives two workgroups an SM (splits too short for a third: 8K-64K at batch 1), 6
# subgroups give 12 warps an SM instead of 8 at the same split count, so the same partials to
# merge (session 15: 1.5x the warps gave the tile loop ~10% more throughput, but the 47 splits
# that gave them added as much merge). Expected: turbo3 32K 28.4 -> ~27, 64K 44.8 -> ~42, mode 0
# gaining more than mode 1 (P2 1.13x -> ~1.10x); 8 subgroups at 1K-4K (64-256 workgroups, SMs
# idle) shorter tile phases. Then short contexts at forced split counts (no code change). The GPU
# tests of the change first.
# Binaries from the branch's build, carried in .pk/bins.tar.xz: build-slim/profile/turboprof,
# build-slim/tests/test_decode_tc, build-slim/tests/test_append_decode.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=/tmp/sg; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 120 build-slim/tests/test_decode_tc --gtest_brief=1 > $R/test_decode_tc.txt 2>&1; echo "test_decode_tc rc $?" >> $R/tests.txt
timeout 150 build-slim/tests/test_append_decode --gtest_brief=1 --gtest_filter='*EveryVariant*' > $R/test_append_decode.txt 2>&1; echo "test_append_decode rc $?" >> $R/tests.txt
for round in 1 2; do
  for g in 4 6 8; do
    TKV_SUBGROUPS=$g TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 60 build-slim/profile/turboprof profile --types turbo3,turbo2,turbo4,f16,q8_0 \
      --ctx 1k,4k,8k,32k,64k,128k --modes 0,1 --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|pipeline decode_tc|rror' | sed "s/^/$round sg$g /"
    TKV_SUBGROUPS=$g timeout 40 build-slim/profile/turboprof profile --types turbo3,f16 --ctx 8k --batch 16 --modes 0 \
      --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|rror' | sed "s/^/$round sg$g-b16 /"
  done
done > $R/profile.txt 2>&1
# Short contexts: the plan's splits (1K: 8 of 2 steps, 64 workgroups on 132 SMs; 512: one split)
# against twice as many of one step each (the merge takes up to 16 partials in one round trip).
for round in 1 2; do
  for cs in 512:1 512:4 512:8 1k:8 1k:16 2k:16 2k:32 4k:32 4k:48; do
    TKV_SPLITS=${cs#*:} timeout 40 build-slim/profile/turboprof profile --types turbo3,f16,q8_0 --ctx ${cs%:*} --modes 0 \
      --repeat 10 2>&1 | grep -E '^(f16|q8_0|turbo)|rror' | sed "s/^/$round s${cs#*:} /"
  done
done > $R/short.txt 2>&1
grep -v Register $R/profile.txt > $R/times.txt; python3 bench/ab_summary.py $R/times.txt > $R/summary.txt 2>&1
tar czf $OUT/sg.tar.gz -C /tmp sg
cat $R/tests.txt; cat $R/summary.txt; cut -c1-60 $R/short.txt
grep Register $R/profile.txt | grep -o "^1 sg[0-9]\|constants \[[0-9,]*\] Register Count = [0-9]*" | paste - - | sort -u | head -30
