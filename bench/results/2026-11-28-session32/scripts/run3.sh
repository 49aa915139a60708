#!/usr/bin/env bash
# Session 32, run 3. carry [".gl", ".pk"]; packed on main (fresh-words merged):
# `bash bench/pack_gpu.sh nopair=c65ef4f:turboprof,bench_append`.
# nopair: main's fresh split without the pair form (session 30: with the overlay's long store,
# pairing cut turbo3's last prologue 4.96 -> 4.38 us; with the store gone, the two query rows each
# of subgroups 2 and 3 may now be the fresh split's longest chain: run 2's turbo2 'rows' 2.23 us,
# that split's prologue 3.34). Expected: nopair's turbo2 ratio_pct lower if so, else higher.
# Then main's P1-P8 table.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for rep in 1 2; do
  for l in main nopair; do
    TKV_BENCH_TYPES=turbo2,turbo3,turbo4 app append.txt "$rep $l 4k" $l fused/llama8b
  done
done
lg "bench"
for l in main nopair; do
  tl tl.txt "$l" $l --fused --types turbo3,turbo2,turbo4 --ctx 4097 --repeat 20
done
lg "timelines"
targets 400
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
