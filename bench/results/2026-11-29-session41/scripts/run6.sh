#!/usr/bin/env bash
# Session 41, run 6. Pack: bash bench/pack_gpu.sh pairtab=exp-pairtab:bench_append,turboprof,test_append_decode
# (patches/pairtab.patch). Run 5: when the new token ends a full split, turbo3's fresh split
# finishes its new rows 1.4-1.6 us after its start but its prologue only after 2.7-3.1 us (the
# others' 1.9): in the pair form subgroups 2 and 3 take two query rows each and build the tables
# alone, with half the invocations. pairtab lets 0 and 1 build their share once they quantized.
# Prediction: the fresh split's prologue ~2.9 -> ~2.0-2.3 us; P7 turbo3 ~5.5% -> ~4%, turbo2
# ~3% -> ~2%; q8_0 (not paired) unchanged.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-pairtab 240 build-slim/tests/test_append_decode-pairtab &
for l in main pairtab; do tl tl.txt "$l fused 4095" $l --fused --types turbo3,turbo2 --ctx 4095 --repeat 20; done
lg tl
for rep in 1 2; do
  for l in main pairtab; do
    TKV_BENCH_TYPES=turbo3,turbo2 app append.txt "$rep $l 4k" $l fused/llama8b
  done
  lg "bench $rep"
done
wait
cut -c1-330 $R/tl.txt
cat $R/progress.txt
append_summary
