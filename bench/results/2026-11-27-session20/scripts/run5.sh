# Session 20, run 5 (inline command of the call, kept as it ran): exactness at 32K (six subgroups planned)
# and 128K, m 1 and 8, for turbo3 and q8_0 (test_decode LargeContexts).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"; source bench/gpu_env.sh build-slim/profile/turboprof; T0=$SECONDS; for t in turbo3 q8_0; do TKV_LARGE_CONTEXTS=$t timeout 110 build-slim/tests/test_decode --gtest_filter='*LargeContexts*' > $OUT/large-$t.txt 2>&1; echo "$t rc $? $((SECONDS-T0))s"; grep -E "large:|OK|FAILED" $OUT/large-$t.txt; done
