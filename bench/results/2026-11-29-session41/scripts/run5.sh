#!/usr/bin/env bash
# Session 41, run 5 (run 4's pack). Run 4, P7 over 128 steps from 4096 (every way at the same
# lengths): turbo4 1.1-2.6%, turbo2 2.0-3.7%, f16 ~0, turbo3 5.2-6.1%, q8_0 5.6-6.5%. Where does
# a fused call lose its time by the new token's place in its split? Timelines at --ctx 4095
# (the new token ends a full split), 4159 (half a split) and 4096 (starts a split: one token),
# and each workgroup's stamps at 4095 (the fresh split's new rows [slot 6] and prologue).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for c in 4095 4159 4096; do
  tl tl.txt "fused $c" main --fused --types turbo3,q8_0,turbo2 --ctx $c --repeat 20
  tl tl.txt "plain $((c + 1))" main --types turbo3,q8_0,turbo2 --ctx $((c + 1)) --repeat 20
done
lg tl
mkdir -p /tmp/wg
for t in turbo3 q8_0; do
  TKV_CACHE_DIR=/tmp/tkv-main timeout 60 $P timeline --fused --types $t --ctx 4095 --repeat 5 --json --workgroups --out /tmp/wg/fused-$t > /dev/null 2>&1
  TKV_CACHE_DIR=/tmp/tkv-main timeout 60 $P timeline --types $t --ctx 4096 --repeat 5 --json --workgroups --out /tmp/wg/plain-$t > /dev/null 2>&1
done
(cd /tmp/wg && tar czf $R/wg.tar.gz .)
lg wg
cut -c1-330 $R/tl.txt
cat $R/progress.txt
