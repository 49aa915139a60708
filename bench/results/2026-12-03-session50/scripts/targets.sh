#!/usr/bin/env bash
# Session 50: the whole P1-P8 table at main after session 49's two tile buffers (12690c3, b5bc074),
# the wide form's K ahead and session 50's two score chains (292bfa1); the last table is session
# 47's (e1fa042).
# carry [".gl", ".pk"]; pack at main: bash bench/pack_gpu.sh
# Expected against session 47: P1's turbo rows at 128K -1.3..-2.9% (turbo2 62.2 -> ~60.6 us),
# 8K +1..2%; P6a's turbo cases ~-6% at m 8 (turbo3 64.0 -> ~59; run 1: 61.3 -> 58.7 on top of
# session 49's -3%); P6b's q8_0 case up (its m 2 fell 38.9 -> ~34.5 us): 1.24x -> ~1.39x; P8
# turbo3 -2%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 420
bundle targets.txt targets-inputs.tar.gz device.txt
