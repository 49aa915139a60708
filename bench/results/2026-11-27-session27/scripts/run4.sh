#!/usr/bin/env bash
# Session 27, GPU call 4 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh` at 1304d7d, whose
# sources are dca9f9c's: the long last split reverted). The P1-P8 table of this build (session 26
# had none; the decode kernels are session 24's, the append's store session 26's).
source bench/gpu_prelude.sh
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_TARGETS_BUDGET=560 TKV_BUILD=build-slim OUT=$R/t timeout 580 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt 2>/dev/null
(cd $R/t && tar czf $R/targets-inputs.tar.gz ./*.json 2>/dev/null); rm -rf $R/t
cat $R/progress.txt
sed -n '/^target/,/targets met/p' $R/targets.txt
