#!/usr/bin/env bash
# Session 45, run 6 (prepared, not run: the device budget was spent): q8magic (branch
# exp-q8magic; patches/q8magic-not-run.patch on main after the q8_bytes02 commit). Run 4's
# listing shows each q8_0 pair's `(w & 0x00ff00ff) ^ 0x64806480` as two LOP3s, an and and an xor: a LOP3 takes one
# immediate, and the driver kept both constants as immediates. q8magic reads the xor's constant
# through the push constant that is always 0 (0x64806480 | pc.zero), so that it lives in a
# register and the mask and the xor can be one LOP3. (The SPIR-V keeps the OR; whether the
# driver then fuses is what this run shows.)
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh q8magic=exp-q8magic:turboprof,test_decode_tc,test_append_decode
# Prediction, if it fuses: ~64 LOP3 off q8_0's steady path (689 -> ~625), class-cost estimate
# 1,110 -> ~990 cycles a tile; q8_0 128K 93 -> ~84 us, 32K 33.5 -> ~31.5, batch 16 8K 79.6 ->
# ~73; 4K within 0.3 us. If not: the same machine code and times.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main q8magic; do loops $l $l profile --types q8_0 --ctx 128k --modes 0 --repeat 2; done
lg loops
suites 200 q8magic
rounds 2 "main q8magic" profile --types q8_0 --ctx 4k,16k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main q8magic" profile --types q8_0 --ctx 8k --batch 16 --modes 0 --repeat 20
report b16.txt
