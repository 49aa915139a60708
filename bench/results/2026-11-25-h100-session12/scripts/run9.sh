# Session 12, run 9: KHR matrices by default where their probe passes (PipelineKey::coopmat_khr;
# TKV_COOPMAT_KHR=0 for NV). test_decode_tc both ways, test_append_decode by default; turboprof
# modes 0 and 1 at 8K, 32K, 128K, turbo2/3/4, one round each way.
source bench/gpu_env.sh build-run/profile/turboprof
I=/tmp/s12r9; rm -rf $I; mkdir -p $I
(nvidia-smi --query-gpu=name,driver_version --format=csv; date -u) > $I/device.txt 2>&1
TKV_LOG=debug timeout 120 build-run/tests/test_decode_tc > $I/tests_tc.txt 2>&1; echo "rc $?" >> $I/tests_tc.txt
TKV_COOPMAT_KHR=0 TKV_CACHE_DIR=/tmp/nv-cache timeout 120 build-run/tests/test_decode_tc --gtest_brief=1 > $I/tests_tc_nv.txt 2>&1; echo "rc $?" >> $I/tests_tc_nv.txt
P() { timeout 90 build-run/profile/turboprof profile --workload llama8b "$@" --repeat 20; }
P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_default.txt 2>&1
TKV_COOPMAT_KHR=0 TKV_CACHE_DIR=/tmp/nv-cache P --ctx 8k,32k,128k --types turbo2,turbo3,turbo4 --modes 0,1 > $I/m1_nv.txt 2>&1
timeout 150 build-run/tests/test_append_decode --gtest_brief=1 > $I/tests_append.txt 2>&1; echo "rc $?" >> $I/tests_append.txt
tar czf $OUT/run9.tar.gz -C /tmp s12r9
