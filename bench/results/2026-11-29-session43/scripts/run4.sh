#!/usr/bin/env bash
# Session 43, run 4: what a batched call pays before its workgroups start. Run 3's timeline put
# 7.1 us of batch 16's call outside its workgroups (batch 1 at 4K: 3.2). A batch's (length, page
# table) pairs go in a buffer update and a barrier before the dispatch (attention/decoder.cpp); one
# sequence's go in the push constants. Prediction: batch 2 at 1K costs ~3-4 us more than batch 1
# (the work of 16 workgroups instead of 8 adds little there), and its timeline's us/call - span
# is ~3-4 us larger. carry [".gl", ".pk"] (main's build).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for bt in 1 2 4 16; do
    rows b.txt "$rep b$bt" main profile --types f16,turbo3 --ctx 1k,4k --batch $bt --modes 0 --variants auto --repeat 30
  done
done
lg profiles
for bt in 1 2 16; do tl tl.txt "b$bt" main --types f16,turbo3 --ctx 1k --batch $bt --repeat 20; done
lg timelines
cat $R/progress.txt
cut -c1-150 $R/b.txt | grep -v "^. b[0-9]* type"
cut -c1-200 $R/tl.txt
