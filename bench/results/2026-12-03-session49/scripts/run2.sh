#!/usr/bin/env bash
# Session 49, run 2: u16 (branch exp-unroll16): run 1's two tile buffers (kept, 12690c3) in the
# 16-row loop (m >= 3) too, where the turbo types prefetch the next tile's K and V (PREFETCH).
# carry [".gl", ".pk"]; pack at main (12690c3):
# bash bench/pack_gpu.sh u16=exp-unroll16:turboprof,test_decode_tc,test_append_decode
# Prediction: as in the 8-column loop, turbo m 3 / m 8 at 32K -1..-3% if registers stay under the
# 12-warp line; if the two buffers spill (STL in the loop), slower.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main u16; do
  loops $l $l profile --types turbo3 --ctx 32k --m 8 --modes 0 --repeat 2
done
lg loops
suites 240 u16
AB_FILE=m8.txt rounds 2 "main u16" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k,128k --m 8 --modes 0 --repeat 20
AB_FILE=m3.txt rounds 2 "main u16" profile --types turbo3 --ctx 8k,32k --m 3 --modes 0 --repeat 20
report m8.txt m3.txt
