#!/usr/bin/env bash
# Session 43, run 3: P8's batch (16 ragged sequences, 4096-8192 tokens) under forced split counts.
# carry [".gl", ".pk"] (main's build). The plan's splits are whole-sequence chunks of one length
# that fill one wave: 16 sequences in 33 (two workgroups an SM) or 49 (three) splits a KV head
# use 75% / 85% of the slots' tokens (python over ragged_lengths), where f16 measured 1.22x its
# read floor. Prediction: if the unfilled slots are f16's gap, more, shorter splits in several
# waves (TKV_SPLITS 8-16: 1024-512 tokens) take f16 to ~1.10-1.15x; the turbo types, bound by
# their loop, move less.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for s in "" 3 4 6 8 12 16; do
    TKV_SPLITS=$s rows p8.txt "$rep s${s:-plan}" main profile --types f16,q8_0,turbo2,turbo3 --ctx 8k --batch 16 \
      --modes 0 --variants auto --repeat 20
  done
  lg "round $rep"
done
for s in "" 8; do
  TKV_SPLITS=$s tl tl.txt "s${s:-plan}" main --types f16,turbo3 --ctx 8k --batch 16 --repeat 10
done
lg timelines
cat $R/progress.txt
cut -c1-200 $R/p8.txt
cut -c1-330 $R/tl.txt
