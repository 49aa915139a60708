#!/usr/bin/env bash
# Session 35, run 2. carry [".gl", ".pk"]; packed on qr-regs (the tree: qrw, the branch's head):
#   bash bench/pack_gpu.sh base=5d3d556:turboprof,bench_append qrr=1759d2e:turboprof,bench_append
# qrr: a turbo row's fresh words packed from the quantizer's registers (K by two shuffles) and a
# group's scalar steps once per group. qrw (main here: the tree): qrr with the norm's reduction
# beside the rotation. Run 1: turbo2's fresh split is ~0.9 us late, ~1.0 of it the quantizer.
# Expected: the fresh prologue ~0.2-0.3 us shorter with qrr (session 33's SASS: ~200 instructions of
# the fw_write's and ~120 of f16 roundings gone from one subgroup's chain), ~0.1 more with qrw;
# turbo2 ratio_pct 4.5 -> ~3%; turbo3/4 unchanged (their fresh prologues are the tables').
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
wait
for l in base qrr main; do
  tl tl.txt "$l" "$l" --fused --types turbo2,turbo3,turbo4 --ctx 4097 --repeat 20 --workgroups --out /tmp/tlw-$l
  python3 bench/timeline_groups.py /tmp/tlw-$l/timeline.json | sed "s/^/$l /" >> $R/groups.txt
done
lg timelines
apps 3 turbo2,turbo3,turbo4 base qrr main
sass fused main timeline --fused --types turbo2 --ctx 4097 --repeat 1
lg sass
cat "$R/progress.txt" "$R/device.txt" "$R/groups.txt"
append_summary
head -8 "$R/sass-fused.txt"
