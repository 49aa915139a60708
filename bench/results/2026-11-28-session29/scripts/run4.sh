#!/usr/bin/env bash
# Session 29, GPU call 4: NOT RUN; for the next session, after run3 (p7-candidate's check) passes
# and main := p7-candidate. carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh` on main (no labels).
# The P1-P8 table of the new main (its tc tests ran in run3): expected as session 28's table
# (run1 there, b069712) but P7: every type's fused step at 4K within 5% of the decode step.
source bench/gpu_prelude.sh
targets 540
cat $R/progress.txt
