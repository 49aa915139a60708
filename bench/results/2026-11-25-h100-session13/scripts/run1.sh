# Session 13, run 1: the final form of the KHR matrices (3f47358, TKV_COOPMAT_KHR=1), never run on
# a GPU in session 12: test_decode_tc and test_append_decode under KHR, then turbo2/3/4 modes 0 and 1
# at 8K/32K/128K NV vs KHR (two rounds), m 8 at 32K and batch 16 at 8K both ways, SASS loops under KHR.
source bench/gpu_env.sh build-run/profile/turboprof
I=/tmp/s13r1; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
TKV_COOPMAT_KHR=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/khr-cache timeout 120 build-run/tests/test_decode_tc > $I/tests_tc_khr.txt 2>&1; echo "rc $?" >> $I/tests_tc_khr.txt
TKV_COOPMAT_KHR=1 TKV_CACHE_DIR=/tmp/khr-cache timeout 170 build-run/tests/test_append_decode --gtest_brief=1 > $I/tests_append_khr.txt 2>&1; echo "rc $?" >> $I/tests_append_khr.txt
P() { timeout 90 build-run/profile/turboprof profile --workload llama8b "$@" --repeat 20; }
for round in 1 2; do
  P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_nv_round$round.txt 2>&1
  TKV_COOPMAT_KHR=1 TKV_CACHE_DIR=/tmp/khr-cache P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_khr_round$round.txt 2>&1
done
for k in 0 1; do
  TKV_COOPMAT_KHR=$k TKV_CACHE_DIR=/tmp/khr-cache$k P --ctx 32k --types turbo2,turbo3,turbo4 --m 8 --modes 0 > $I/m8_khr$k.txt 2>&1
  TKV_COOPMAT_KHR=$k TKV_CACHE_DIR=/tmp/khr-cache$k P --ctx 8k --types turbo2,turbo3,turbo4 --batch 16 --modes 0 > $I/b16_khr$k.txt 2>&1
done
mkdir -p $I/sass_khr
TKV_COOPMAT_KHR=1 TKV_PIPELINE_STATS=1 TKV_LOG=debug TKV_CACHE_DIR=$I/cache_khr timeout 90 build-run/profile/turboprof profile \
  --workload llama8b --ctx 128k --types turbo2,turbo3,turbo4 --modes 0 --repeat 5 > $I/stats_run_khr.txt 2>&1
python3 bench/sass_dump.py $I/sass_khr $I/cache_khr > /dev/null 2>&1
for f in $I/sass_khr/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done > $I/loops_khr.txt 2>&1
grep "decode_tc" $I/stats_run_khr.txt | grep "Register Count" | cut -c1-300 > $I/stats_khr.txt
grep -i "coopmat\|KHR\|tc matrices" $I/stats_run_khr.txt | head -5 >> $I/stats_khr.txt
rm -rf $I/cache_khr
tar czf $OUT/run1.tar.gz -C /tmp s13r1
