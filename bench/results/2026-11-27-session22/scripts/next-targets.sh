#!/usr/bin/env bash
# For the next GPU session (carry [".gl", ".pk"] from bench/pack_gpu.sh on main): what session 22 could not
# run with its final commit (69d44ac and after). `tests`: every GPU test of the tc forms with the
# plan's new defaults (rows16 in 8 subgroups for turbo pairs, rows16 for f16 pairs); `targets`: the
# P1-P8 table. One GPU call each (the tests compile every pipeline first on a cold machine).
source bench/gpu_prelude.sh
case "${1:-tests}" in
  tests)
    for t in test_decode_tc test_append_decode; do
      timeout 200 build-slim/tests/$t > $R/$t.txt 2>&1; lg "$t rc $?"
      grep -E "FAILED|Failure|PASSED" $R/$t.txt | head -20 >> $R/progress.txt
    done
    for ty in turbo3 f16; do
      TKV_LARGE_CONTEXTS=$ty timeout 80 build-slim/tests/test_decode --gtest_filter='*LargeContexts*' > $R/large-$ty.txt 2>&1
      lg "LargeContexts $ty rc $?"; grep -E "large:|FAILED|PASSED" $R/large-$ty.txt >> $R/progress.txt
    done
    cat $R/progress.txt ;;
  targets)
    TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout 540 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
    lg "targets rc $?"
    # (only a few files come back from $OUT: the table and the log, not the tarball)
    cp $R/t/targets.txt $R/targets.txt; rm -rf $R/t
    cat $R/progress.txt; sed -n '/^target/,/targets met/p' $R/targets.txt | grep -v "^  " ;;
esac
