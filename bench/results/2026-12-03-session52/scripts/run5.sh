#!/usr/bin/env bash
# Session 52 run 5 (~200 s): branch exp-short (label sh): short contexts at one tc workgroup an SM,
# one-step splits allowed, eight subgroups where their splits keep the SMs filled (run 4's
# measured points), against main (73b24e3). Its unmeasured changes too: m 1 3K and 4097 tokens,
# m 2 2K, m 3 1K, batch 4 1K. Kernel exactness at the new plans first (turboprof check).
# Prediction: m 1 1K -0.5..-1 us, 4K -0.5..-0.8 (run 4), 2K even; the others unknown.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
timeout 120 $P-sh check --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 1k,4k > $R/check-sh.txt 2>&1; echo "check rc $?" >> $R/check-sh.txt
lg "check rc $(tail -1 $R/check-sh.txt)"
for rep in 1 2; do
  for l in main sh; do
    rows s1.txt "$rep $l" $l profile --types f16,q8_0,turbo2,turbo3,turbo4 --ctx 1k,2k,3k,4k,4097 --modes 0 --repeat 20
    rows s2.txt "$rep $l" $l profile --types q8_0,turbo3 --ctx 2k --m 2 --modes 0 --repeat 20
    rows s3.txt "$rep $l" $l profile --types q8_0,turbo3 --ctx 1k --m 3 --modes 0 --repeat 20
    rows sb.txt "$rep $l" $l profile --types q8_0,turbo3 --ctx 1k --batch 4 --modes 0 --repeat 20
  done
  lg "round $rep"
done
report s1.txt s2.txt s3.txt sb.txt
