# Session 20: the plan's six-subgroup rule (tc-subgroups + plan rule): GPU tests, then the targets.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
timeout 60 build-slim/tests/test_decode_tc --gtest_brief=1 > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
timeout 60 build-slim/tests/test_append_decode --gtest_brief=1 --gtest_filter='*EveryVariant*' > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_BUILD=build-slim OUT=$R/t timeout 450 bash bench/run_targets.sh; lg "targets rc $?"
cat $R/progress.txt; tail -n 3 $R/test_decode_tc.txt; tail -n 3 $R/test_append_decode.txt; head -n 40 $R/t/targets.txt
