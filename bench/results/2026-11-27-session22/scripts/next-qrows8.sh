#!/usr/bin/env bash
# Prepared for the next GPU session (branch rows16-qrows8; not run in session 22: no device time
# left). Pack with `scripts/pack-ab.sh <turboprof built from main>` on the branch, carry
# [".gl", ".pk"].
# rows16 in 8 subgroups holds its 16 query rows in subgroups 0-3 (4 rows each) while 4-7 wait at
# the prologue's barrier; the branch gives every subgroup 2 rows (rows sg + 8 i). Session 22's
# timeline (m 3 32K turbo3, 8 subgroups): prologue 5.0 us against the columns' 3.3 (2 rows a
# subgroup there). Expected: prologue -0.5 to -1 us at m 3 / m 8 with 8 subgroups, the same with
# 4 (unchanged code), m 1 unchanged.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS; P=build-slim/profile/turboprof
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
timeout 100 build-slim/tests/test_decode_tc --gtest_filter='*Sixteen*:*Subgroups*' > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_decode_tc.txt | head -20 >> $R/progress.txt
for bin in base new; do
  B=$P; [ $bin = base ] && B=$P-base
  TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B timeline --types turbo3,turbo4 --ctx 32k --m 3 --repeat 5 > $R/timeline-$bin.txt 2>&1
  lg "timeline $bin rc $?"
done
for round in 1 2; do
  for bin in base new; do
    B=$P; [ $bin = base ] && B=$P-base
    for m in 1 3 8; do
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 40 $B profile --types turbo3,turbo2,turbo4 --ctx 8k,32k,128k --m $m --modes 0 --repeat 10 2>&1 |
        grep -E '^(turbo|q8_0|f16)|rror' | sed "s/^/$round $bin-m$m /" >> $R/profile.txt
    done
    lg "r$round $bin"
  done
done
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
cat $R/progress.txt; grep -hE "^(turbo|type)" $R/timeline-*.txt; cat $R/summary.txt
