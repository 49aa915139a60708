#!/usr/bin/env bash
# Session 33, run 4 (timing only). carry [".gl", ".pk"]; packed on main be64a93:
# `bash bench/pack_gpu.sh d3=23d126c:turboprof d4=f9fcb24:turboprof fo=78d1bb8:turboprof fof=f567b4e:turboprof`
# Slot 6 (the 'rows' column: the median over the 8 fresh splits, from their start):
# d3 / d4 (branch diag-fresh-tile): invocation 0 after the prologue's first / second barrier.
# fo (branch diag-fo, on fresh-owner): invocation 96 (subgroup 3, the fresh tile's owner there)
# after its early-loaded tile is patched; fof: the same with the early loads used before the
# barrier (so that the compiler cannot sink them past it).
# Run 3: in main's fresh split (turbo2, 4097) the rows are done at ~2.2-2.4 us, the prologue
# ends ~3.2, the first fetch + patch at 4.04, the scores 4.34, the loop 4.78.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tls turbo2,turbo3 4097 main d3 d4 fo fof
sass fo fo timeline --fused --types turbo2 --ctx 4097 --repeat 1
sass fof fof timeline --fused --types turbo2 --ctx 4097 --repeat 1
lg sass
cat $R/progress.txt $R/device.txt
cut -c1-250 $R/tl.txt
cat $R/sass-fo.txt $R/sass-fof.txt
