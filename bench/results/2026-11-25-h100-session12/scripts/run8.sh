# Session 12, run 8: the tc kernel's NV cooperative matrices rewritten as KHR ones on the host
# (kvcache/vk/coopmat_khr.cpp, TKV_COOPMAT_KHR=1: uses A, B, accumulator), against the same
# binary without it; the Pb fragment now built in mma's B order under KHR (B_NATIVE, shuffles),
# the probe expecting that order. Also test_decode_tc without KHR, test_append_decode with it. test_decode_tc under KHR (the probe and every exactness case); turboprof modes
# 0 and 1 at 8K, 32K, 128K, turbo2/3/4, two rounds; registers and the loops' SASS under KHR.
source bench/gpu_env.sh build-run/profile/turboprof_new
I=/tmp/s12r8; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
TKV_COOPMAT_KHR=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/khr-cache timeout 120 build-run/tests/test_decode_tc > $I/tests_tc_khr.txt 2>&1; echo "rc $?" >> $I/tests_tc_khr.txt
timeout 120 build-run/tests/test_decode_tc --gtest_brief=1 > $I/tests_tc_nv.txt 2>&1; echo "rc $?" >> $I/tests_tc_nv.txt
P() { timeout 90 build-run/profile/turboprof_new profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_nv_round$round.txt 2>&1
  TKV_COOPMAT_KHR=1 TKV_CACHE_DIR=/tmp/khr-cache P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_khr_round$round.txt 2>&1
done
mkdir -p $I/sass_khr
TKV_COOPMAT_KHR=1 TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_khr timeout 90 build-run/profile/turboprof_new profile \
  --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run_khr.txt 2>&1
python3 bench/sass_dump.py $I/sass_khr $I/cache_khr > /dev/null 2>&1
for f in $I/sass_khr/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_khr.txt 2>&1
grep "decode_tc" $I/stats_run_khr.txt | grep "Register Count" | cut -c1-300 > $I/stats_khr.txt
grep -i "coopmat\|KHR\|tc decode" $I/stats_run_khr.txt | head -5 >> $I/stats_khr.txt
rm -rf $I/cache_khr
TKV_COOPMAT_KHR=1 TKV_CACHE_DIR=/tmp/khr-cache timeout 170 build-run/tests/test_append_decode --gtest_brief=1 > $I/tests_append_khr.txt 2>&1; echo "rc $?" >> $I/tests_append_khr.txt
tar czf $OUT/run8.tar.gz -C /tmp s12r8
