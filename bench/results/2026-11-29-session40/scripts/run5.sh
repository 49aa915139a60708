#!/usr/bin/env bash
# Session 40, run 5 (run 4's pack). Run 4: with the same 4096 tokens attended, P7 turbo4 stays at
# ~11%: the fused call with the 256-entry plan (one workgroup of 8 subgroups an SM) costs ~1.3 us
# more than its decode call, where the 64-entry plan's fused call cost ~0.2 us. Where does the
# fresh split's time go? Timelines (medians of 20) of turbo4 fused at 4096 (256-entry plan) and
# 4097 (64-entry plan), and plain decode at both.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for c in 4096 4097; do
  tl tl.txt "fused $c" main --fused --types turbo4,turbo3 --ctx $c --repeat 20
  tl tl.txt "plain $c" main --types turbo4,turbo3 --ctx $c --repeat 20
done
lg tl
cut -c1-260 $R/tl.txt
