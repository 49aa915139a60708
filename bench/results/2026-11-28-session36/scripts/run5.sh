#!/usr/bin/env bash
# Session 36, run 5. carry [".gl", ".pk"]; run 4's pack (the tree's binaries at 4fafb9c).
# docs/targets.md: does every type's 128K call wait on its loop rather than on memory? Modes 0
# (real) and 1 (no KV reads) at 128K for every type, two rounds.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do rows modes.txt "$rep" main profile --ctx 128k --modes 0,1 --repeat 20; done
lg modes
cat $R/progress.txt $R/device.txt; cut -c1-120 $R/modes.txt
