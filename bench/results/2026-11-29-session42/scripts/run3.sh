#!/usr/bin/env bash
# Session 42, run 3: rowreg (branch exp-rowreg) against main, P7 q8_0 (f16 as a check).
# Run 2 (rowlate) took q8_0's fresh-split prologue 4.00 -> 2.96 us with no stores in it, but its
# tiles 3.65 -> 4.51 (they then overlap the other splits' loads): P7 unmoved (6.2-6.7%), f16 +3%
# (all its splits' tiles slower). The prologue left is the quantizer: new rows 1.92 us against
# turbo's ~1.35, its copy through shared memory and a subgroup barrier before the words are packed.
# rowreg packs q8_0's words in registers (two shuffles a word, as the turbo sides' fw_write) and
# keeps f16 sides as main.
# Prediction: q8_0's prologue ~0.4 us shorter; P7 q8_0 6.3% -> ~5% (part absorbed by its tiles, as
# in run 2); f16 as main.
# pack: bash bench/pack_gpu.sh rowreg=exp-rowreg:bench_append,turboprof,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-rowreg 240 build-slim/tests/test_append_decode-rowreg
labels=main
out=$(awk -v h="===== app-rowreg" 'index($0, h) == 1 {on = 1; next} /^=====/ {on = 0} on' $R/tests.txt)
echo "$out" | grep -q "PASSED" && ! echo "$out" | grep -q "FAILED" && labels="$labels rowreg"
lg "timed: $labels"
for l in $labels; do
  tl tl.txt "$l fused 4095" $l --fused --types q8_0,f16 --ctx 4095 --repeat 20
done
lg tl
apps 3 q8_0 $labels
apps 1 f16 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
