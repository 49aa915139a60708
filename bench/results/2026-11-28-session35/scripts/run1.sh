#!/usr/bin/env bash
# For the next session's first call (not run in session 34: its device time was spent).
# carry [".gl", ".pk"]; pack on main (the tree: the base) with the three knockouts, each off main:
#   bash bench/pack_gpu.sh nob=39c3307:turboprof,bench_append noq=af535c2:turboprof,bench_append \
#     notile=bd6b2c1:turboprof,bench_append
# nob (diag-nob, run 5's, on main): the fresh tiles' new bits not rebuilt. noq (diag-noq): the fused splits'
# new rows not quantized. notile (diag-notile): the fused split's tiles that hold new tokens skipped
# (at 4097 its one tile and that tile's rebuild). All timing only: their results are wrong.
# Question: how turbo2's fused 4K excess (~5%, ~0.6 us a call) divides between the quantizer, the
# fresh tile and its rebuild (run 5: the rebuild ~1 point). Expected: whichever knockout takes
# turbo2 under ~2% names the piece to rebuild.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for l in main nob noq notile; do
  tl tl.txt "$l" "$l" --fused --types turbo2,turbo3,turbo4 --ctx 4097 --repeat 20 --workgroups --out /tmp/tlw-$l
  python3 bench/timeline_groups.py /tmp/tlw-$l/timeline.json | sed "s/^/$l /" >> $R/groups.txt
done
apps 3 turbo2,turbo3,turbo4 main nob noq notile
cat "$R/progress.txt" "$R/device.txt" "$R/groups.txt"
append_summary
cut -c1-250 "$R/tl.txt"
