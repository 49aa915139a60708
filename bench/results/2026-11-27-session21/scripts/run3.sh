#!/usr/bin/env bash
# Session 21, run 3 (main with rows16 merged, 8bb6406; carry [".gl", ".pk"] from pack.sh):
# exactness at 32K and 128K (test_decode LargeContexts, turbo3 and q8_0: m 8 takes rows16), then
# the P1-P8 targets.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
for t in turbo3 q8_0; do
  TKV_LARGE_CONTEXTS=$t timeout 70 build-slim/tests/test_decode --gtest_filter='*LargeContexts*' > $R/large-$t.txt 2>&1
  lg "LargeContexts $t rc $?"; grep -E "large:|FAILED|PASSED" $R/large-$t.txt >> $R/progress.txt
done
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout $((560 - (SECONDS - T0))) bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cat $R/progress.txt; sed -n '/^target/,/targets met/p' $R/t/targets.txt 2>/dev/null | grep -v "^  "
