#!/usr/bin/env bash
# Session 33, run 3 (timing only). carry [".gl", ".pk"]; packed on main be64a93:
# `bash bench/pack_gpu.sh d0=cb4452b:turboprof d1=8640866:turboprof d2=b71abe5:turboprof`
# (branch diag-fresh-tile: slot 6, the 'rows' column, stamped by invocation 0 of the fresh split,
# the owner of its one tile at 4097: d0 after the first fetch and its patch, d1 after that tile's
# scores, d2 after the tile loop, before the barrier; each stamp waits for a value computed there.)
# Run 2: turbo2's fresh tile takes 1.5-1.8 us even with its loads issued in the prologue
# (fresh-owner, not kept); where do they go?
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tls turbo2,turbo3 4097 main d0 d1 d2
sass fused main timeline --fused --types turbo2 --ctx 4097 --repeat 1
lg sass
cat $R/progress.txt $R/device.txt
cut -c1-250 $R/tl.txt
head -40 $R/sass-fused.txt
