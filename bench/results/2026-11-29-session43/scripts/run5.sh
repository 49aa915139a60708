#!/usr/bin/env bash
# Session 43, run 5: push (a batch's (length, page table) pairs in the push constants, 26 sequences
# on this GPU; no buffer update and barrier before the dispatch) against main. carry [".gl", ".pk"];
# pack at main: bash bench/pack_gpu.sh push=batch-push:turboprof,test_decode,test_decode_tc,test_append_decode
# Run 4 put ~4.1 us of batch 2's 1K call outside its workgroups beyond batch 1's. Prediction:
# batch 2 and 16 calls ~4 us shorter at every depth (1K f16 17.4 -> ~13.5 us; 8K batch 16 f16
# 110.6 -> ~106.5, 1.22x -> ~1.17x its read floor); batch 1 even.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc-push 110 build-slim/tests/test_decode_tc-push &
tst dec-push 110 build-slim/tests/test_decode-push --gtest_filter='*BatchesInline*:*SplitMerge*:*EveryTypePair*' &
tst app-push 110 build-slim/tests/test_append_decode-push --gtest_filter='*OptionsAndRowFormats*:*DecodeLoop*:*SeparateAndAutomatic*' &
wait
lg tests
for bt in 2 16; do
  for l in main push; do
    rows b.txt "b$bt $l" $l profile --types f16,turbo3 --ctx 1k,8k --batch $bt --modes 0 --variants auto --repeat 20
  done
done
lg profiles
cat $R/progress.txt
cut -c1-150 $R/b.txt | grep -v " type "
