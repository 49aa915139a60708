#!/usr/bin/env bash
# Session 21, run 4: the fused append-decode call with rows16 (test_append_decode's
# RowsOnTheMmasSixteenRowSide) and EveryVariant, with room for a cold machine's pipeline builds.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
timeout 400 build-slim/tests/test_append_decode --gtest_filter='*Sixteen*:*EveryVariant*' > $R/test_append_decode.txt 2>&1
lg "test_append_decode rc $?"
cat $R/progress.txt; grep -E "OK|FAILED|Failure|PASSED|SKIPPED|error" $R/test_append_decode.txt | head -30
