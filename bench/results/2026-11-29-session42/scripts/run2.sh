#!/usr/bin/env bash
# Session 42, run 2: rowlate (branch exp-rowlate) against main, P7's q8_0 and f16.
# Run 1 (rowpatch) moved q8_0's wait from the fresh split's prologue (4.05 -> 2.98 us) into its
# tiles (3.84 -> 4.88): the fresh tile's plain loads followed the prologue's pool atomics to the
# same words. rowlate stores the new rows from the fresh tile's fetch, after its loads (as the
# turbo sides do), so no store precedes any load of the split.
# Prediction: q8_0's fresh split ~1 us shorter; q8_0 P7 ~6% -> ~3-4%; f16 as rowpatch (~+1.5%) or
# better (its prologue's stores gone too).
# pack: bash bench/pack_gpu.sh rowlate=exp-rowlate:bench_append,turboprof,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-rowlate 240 build-slim/tests/test_append_decode-rowlate
labels=main
out=$(awk -v h="===== app-rowlate" 'index($0, h) == 1 {on = 1; next} /^=====/ {on = 0} on' $R/tests.txt)
echo "$out" | grep -q "PASSED" && ! echo "$out" | grep -q "FAILED" && labels="$labels rowlate"
lg "timed: $labels"
for l in $labels; do
  tl tl.txt "$l fused 4095" $l --fused --types q8_0,f16 --ctx 4095 --repeat 20
done
lg tl
apps 3 q8_0,f16 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
