#!/usr/bin/env bash
# Session 39, run 1. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh k8=exp-k8:turboprof,test_decode_tc
#   k8s=exp-k8s:turboprof
# The turbo (hi, lo) products of the 8-column form as m16n8k8 MMAs: each A operand is then the two
# registers of one table read (rows g, g + 8 = hi, lo), where an m16n8k16 A takes two reads that
# the driver copies into one quad (152 copies in turbo3's steady path, session 38). k8s: the score
# MMAs alone; k8: scores and output (the output's accumulators per 8-dim block, hi and lo rows,
# twice the registers). Prediction: copies -64 (k8s) / -128 (k8); at ~1.4-1.9 cycles a copy and
# two k8 MMAs costing about one k16 one, turbo3 128K -8% (k8s) to -15% (k8). Unknown: the cost of
# a k8 MMA's issue (if it holds the scheduler as long as a k16 one, k8 loses ~+20%).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst k8 240 build-slim/tests/test_decode_tc-k8 --gtest_filter=-*KhrRewriteOfTheEmbeddedShaders*
for l in k8s k8; do rows check.txt "$l" "$l" check --types turbo3,turbo4 --ctx 4k; done
lg check
for l in main k8s k8; do loops "$l" "$l" profile --types turbo3,turbo4 --ctx 128k --modes 0 --repeat 2; done
lg loops
grep -E "^== |steady path:|^MOV|^LOP3|^HMMA|issue floor" $R/loops.txt
rounds 2 "main k8s k8" profile --types turbo3,turbo4 --ctx 32k,128k --modes 0 --repeat 20
cat $R/progress.txt $R/device.txt
cat $R/check.txt | head -30
grep -i rror $R/ab.txt | head -5
python3 bench/ab_summary.py $R/ab.txt
bundle ab.txt loops.txt check.txt tests.txt
