#!/usr/bin/env bash
# Prepared in session 49: the whole P1-P8 table at main after session 49's two tile buffers
# (12690c3, b5bc074) and the wide form's K ahead; the last table is session 47's (e1fa042).
# carry [".gl", ".pk"]; pack at main: bash bench/pack_gpu.sh
# Expected against it: P1's turbo rows at 128K -1.3..-2.9% (turbo2 62.2 -> ~60.6 us, 3.10x ->
# ~3.0x), 8K +1..2%; P6a's turbo cases -1.4..-3.2% at m 8 (turbo3 64.0 -> ~62); P6b's q8_0 case
# (m 3 / m 2) up, as its m 2 fell 38.9 -> ~34.5 us: 1.24x -> ~1.39x (m 3 unchanged); P8 turbo3 -2%.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
targets 420
bundle targets.txt targets-inputs.tar.gz device.txt
