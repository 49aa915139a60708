#!/usr/bin/env bash
# Prepared in session 43, not run: the whole P1-P8 table at main after aabc330 (P8's batch, and
# every batched row, changed; batch 1 did not), within 420 s. carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh. Expected: P8 f16 ~1.12x (met for f16 alone), the turbo types ~2.9-3.5x;
# every batch-1 row within ~1% of session 41's run 7.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 420
cat $R/progress.txt $R/device.txt
