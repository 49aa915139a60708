#!/usr/bin/env bash
# Session 47, run 4 (prepared, not run: the session's device time was spent): V one tile ahead
# (run 2's V_AHEAD, kept for q8_0's one-row loop) in two more places, each a one-line change:
# (The branches may not outlive the session: patches/vahead-wide-not-run.patch and
# vahead-f16-not-run.patch on main recreate them.)
# wide (branch exp-vahead-wide): q8_0's wide form too (m 2: 8 query rows in the 8-column loop);
# f16v (branch exp-vahead-f16): f16 V too (one-row loop; 32 words a lane, not q8_0's 16).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh wide=exp-vahead-wide:turboprof,test_decode_tc,test_append_decode f16v=exp-vahead-f16:turboprof,test_decode_tc,test_append_decode
# Prediction: the wide form held 168-175 registers before (the comment above PREFETCH): +17
# would pass the 12-warp line or spill (run 3: the 16-row loop spilled at R252), so m 2 at 32K
# (38.7 us) slower unless the driver again finds room (run 2: +4 where +17 was predicted); then
# -2..-3%. f16 at 128K is 1.11x its floor (131.8 us): little to gain there; at 8K-32K (1.24-1.61x)
# -2..-4% if it fits; +32 words a lane may spill (f16's loop held R151 in session 19).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
for l in main wide; do loops $l $l profile --types q8_0 --ctx 32k --m 2 --modes 0 --repeat 2; done
for l in main f16v; do loops $l $l profile --types f16 --ctx 128k --modes 0 --repeat 2; done
lg loops
tested test_decode_tc 200 wide f16v
tested test_append_decode 200 wide f16v
AB_FILE=m2.txt rounds 2 "main wide" profile --types q8_0 --ctx 8k,32k --m 2 --modes 0 --repeat 20
rounds 2 "main f16v" profile --types f16 --ctx 4k,8k,32k,128k --modes 0 --repeat 20
AB_FILE=b16.txt rounds 2 "main f16v" profile --types f16 --ctx 8k --batch 16 --modes 0 --repeat 20
report m2.txt b16.txt
