#!/usr/bin/env bash
# Prepared in session 41, not run: next-tilesup.sh and next-rowpatch.sh in one call (one start,
# ~6 minutes). carry [".gl", ".pk"]; pack at main with both experiments as labels:
#   for e in tilesup rowpatch; do git checkout -q -b exp-$e && git apply \
#     bench/results/2026-11-29-session41/patches/$e-not-run.patch && git commit -qam "exp $e" && git checkout -q main; done
#   bash bench/pack_gpu.sh tilesup=exp-tilesup:bench_append,turboprof,test_append_decode \
#     rowpatch=exp-rowpatch:bench_append,turboprof,test_append_decode
# The two scripts' headers give each experiment's reason and prediction. A label whose
# test_append_decode fails is not timed.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-tilesup 240 build-slim/tests/test_append_decode-tilesup &
tst app-rowpatch 240 build-slim/tests/test_append_decode-rowpatch &
wait
labels=main
for l in tilesup rowpatch; do
  out=$(awk -v h="===== app-$l" 'index($0, h) == 1 {on = 1; next} /^=====/ {on = 0} on' $R/tests.txt)
  echo "$out" | grep -q "PASSED" && ! echo "$out" | grep -q "FAILED" && labels="$labels $l"
done
lg "timed: $labels"
for l in $labels; do
  tl tl.txt "$l fused 4095" $l --fused --types turbo3,turbo2,q8_0,f16 --ctx 4095 --repeat 20
done
lg tl
apps 2 turbo3,turbo2 $labels
apps 2 q8_0,f16 $labels
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
