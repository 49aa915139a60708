#!/usr/bin/env bash
# Session 39, run 3. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh t256=exp-t256:turboprof c8=exp-c8:turboprof
# Run 2: t256 took 214 instructions (most of them ALU) out of turbo4's steady path (790 -> 576,
# about turbo3's 569) and turbo4 at 128K did not move (95.3 -> 95.2 us), where turbo3 with the
# same mix runs 70.8. Two candidates: the 2-way bank conflicts of 8 copies, or memory (turbo4
# holds 1.36x turbo3's bytes; 95.2 / 70.8 = 1.34). c8: turbo3's table in 8 copies (the same
# instructions, conflicts added). Predictions: if conflicts cost what the sign work saved,
# turbo3 128K 70.8 -> ~90 us with c8; if memory binds t256, its mode 1 (no K/V reads) drops
# well under its mode 0 (main's turbo4: 88.5 vs 95.1 in session 36).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
rows check.txt c8 c8 check --types turbo3,turbo3/q8_0 --ctx 4k
lg check
loops c8 c8 profile --types turbo3 --ctx 128k --modes 0 --repeat 2
lg loops
grep -E "^== |steady path:|^MOV" $R/loops.txt
rounds 2 "main c8" profile --types turbo3 --ctx 32k,128k --modes 0,1 --repeat 20
mv $R/ab.txt $R/ab-c8.txt
rounds 2 "main t256" profile --types turbo4 --ctx 32k,128k --modes 0,1 --repeat 20
cat $R/progress.txt $R/device.txt
grep -E "^c8 (turbo|q8)" $R/check.txt
echo "c8:"; python3 bench/ab_summary.py $R/ab-c8.txt
echo "t256:"; python3 bench/ab_summary.py $R/ab.txt
bundle ab.txt ab-c8.txt loops.txt check.txt
