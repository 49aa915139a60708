python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS
lg() { echo "[$((SECONDS-T0))s] $*" >> $R/progress.txt; }
lg start
timeout 20 build-slim/profile/turboprof devices > $R/devices.txt 2>&1; lg "devices rc $?"
for g in 4 6 8; do
  TKV_SUBGROUPS=$g timeout 25 build-slim/profile/turboprof profile --types turbo3 --ctx 8k --modes 0 --repeat 5 > $R/p-sg$g.txt 2>&1; lg "sg$g rc $?"
done
timeout 90 build-slim/tests/test_decode_tc --gtest_brief=1 > $R/test_decode_tc.txt 2>&1; lg "test_decode_tc rc $?"
cat $R/progress.txt; tail -n 5 $R/p-sg*.txt; tail -n 15 $R/test_decode_tc.txt
