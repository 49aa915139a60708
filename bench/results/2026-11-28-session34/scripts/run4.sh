#!/usr/bin/env bash
# carry [".gl", ".pk"]; packed on branch diag-nt-late: `bash bench/pack_gpu.sh base=9a6d280:turboprof`
# main = nt-late with its pool store before the workgroup's last stamps (slot 5 after the store in
# the fresh split; a merger's "finish" includes it). base = main 9a6d280.
# Question: does nt-late's fresh split end the call after its store, and is it the group's merger?
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tls turbo2,turbo3,turbo4 4097 base main
tls turbo2 4150 base main
cat "$R/progress.txt"; cut -c1-250 "$R/tl.txt"
