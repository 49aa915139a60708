#!/usr/bin/env bash
# Session 51: the whole P1-P8 table at main after k8 (e297bbc: the one-row turbo scores as 16x8x8
# MMAs) and vf (9e367a2: q8_0 V not ahead in a fused call's one-row loop); the last table is
# session 50's (292bfa1).
# carry [".gl", ".pk"]; pack at main: bash bench/pack_gpu.sh
# Expected against session 50: P7 q8_0 6.74% -> ~1-2% (run 3), every type under 5% (P7 met if
# turbo3 reads under, as in runs 2-3); P1 turbo3 / turbo4 rows at 8K-128K -1..-2% (run 1), turbo2
# and the rest even; P2 mode 0 turbo3 / turbo4 -1..-2% (1.32x -> ~1.30x).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 390
bundle targets.txt targets-inputs.tar.gz device.txt
