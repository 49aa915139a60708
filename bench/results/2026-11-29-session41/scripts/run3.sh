#!/usr/bin/env bash
# Session 41, run 3. Pack: bash bench/pack_gpu.sh old=8b0c677:bench_append,turboprof (main at
# 50b7ee0). Run 2 found that P7's turbo4 miss is the measure's: within one submission the
# appending steps attended ctx + i tokens (median ~ctx + 32), past the 4096 where turbo4's
# 256-entry plan ends. main now rolls back before every step. Prediction: turbo4's P7 ~11% ->
# ~4-6% (run 2's per-call timelines: fused 13.82 vs plain 13.06-13.31 us at 4096); the other
# types a little lower than before (turbo3's plan too changes past 4096: 32 -> 33 splits).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
# (app allows 90 s a call: ~10 s a row, four rows a call)
all() { for t in turbo4,turbo3 turbo2,q8_0 f16; do TKV_BENCH_TYPES=$t app append.txt "$1 main 4k" main fused/llama8b; done; lg "main $1"; }
all 1
TKV_BENCH_TYPES=turbo4,turbo3 app append.txt "1 old 4k" old fused/llama8b
lg "old 1"
for l in main old; do
  tl tl.txt "$l fused 4096" $l --fused --types turbo4,turbo3 --ctx 4095 --repeat 20
  tl tl.txt "$l plain 4096" $l --types turbo4,turbo3 --ctx 4096 --repeat 20
done
lg tl
all 2
cut -c1-250 $R/tl.txt
cat $R/progress.txt
append_summary
