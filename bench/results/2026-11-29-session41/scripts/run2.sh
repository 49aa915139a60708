#!/usr/bin/env bash
# Session 41, run 2 (run 1's pack). Run 1: the fused and plain turbo4 pipelines of bench_append
# have the same steady path (575 with the 256-entry table, 932/933 with the 64-entry one), the
# same registers (R156 / R161), no spills; restrict changed neither code nor time. Yet the fused
# call with the 256-entry plan runs its tiles at 3.87 us a split against 2.82 (session 40 run 6).
# Is the gap a per-tile rate (it would stay ~37% at 32K and 128K, where a subgroup runs many
# tiles) or a fixed cost of a split (it would shrink)? And the whole SASS of both, to diff.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
TKV_BENCH_TYPES=turbo4 TKV_BENCH_APPEND_FORMATS=f16 TKV_BENCH_REPEAT=4 SASS_BIN=build-slim/bench/bench_append \
  sass t4 main --benchmark_filter=fused/llama8b/turbo4/f16
lg sass
for c in 4096 32768 131072; do
  tl tl.txt "fused $c" main --fused --types turbo4,turbo3 --ctx $((c - 1)) --repeat 20
  tl tl.txt "plain $c" main --types turbo4,turbo3 --ctx $c --repeat 20
done
lg tl
mkdir -p /tmp/wg
TKV_CACHE_DIR=/tmp/tkv-main timeout 60 $P timeline --fused --types turbo4 --ctx 4095 --repeat 3 --json --workgroups --out /tmp/wg/fused > /dev/null 2>&1
TKV_CACHE_DIR=/tmp/tkv-main timeout 60 $P timeline --types turbo4 --ctx 4096 --repeat 3 --json --workgroups --out /tmp/wg/plain > /dev/null 2>&1
(cd /tmp/wg && tar czf $R/wg.tar.gz .)
lg wg
cut -c1-330 $R/tl.txt
cat $R/progress.txt
