#!/usr/bin/env bash
# Session 29, GPU call 4: NOT RUN; for the next session, after run3 (p7-candidate's check) passes
# and main := p7-candidate. carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh` on main (no labels).
# The P1-P8 table of the new main (its tc tests ran in run3): expected as session 28's table
# (run1 there, b069712) but P7: every type's fused step at 4K within 5% of the decode step.
source bench/gpu_prelude.sh
TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_TARGETS_BUDGET=540 TKV_BUILD=build-slim OUT=$R/t timeout 552 bash bench/run_targets.sh > $R/targets-run.txt 2>&1
lg "targets rc $?"
cp $R/t/targets.txt $R/targets.txt 2>/dev/null
(cd $R/t && tar czf $R/targets-inputs.tar.gz ./*.json 2>/dev/null); rm -rf $R/t
cat $R/progress.txt
sed -n '/^target/,/targets met/p' $R/targets.txt
