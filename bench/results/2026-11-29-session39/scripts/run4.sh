#!/usr/bin/env bash
# Session 39, run 4. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh t256=exp-t256:turboprof t256x=exp-t256x:turboprof
# Run 3: 8 copies of turbo3's table (conflicts alone) took turbo3 128K 70.9 -> 93.2 us, and t256's
# loop without conflicts (mode 1: every field 0, one entry) ran 66.0 where main's turbo4 runs
# 88.1. So the sign work is worth ~25% of turbo4's loop, and 2-way conflicts cost as much.
# t256x: 256 entries in 16 copies (32 KB, no conflicts), the plan taking it wherever it fits:
# one workgroup an SM. Predictions: 4 subgroups (4 warps an SM) slower than main; 8 subgroups
# (TKV_SUBGROUPS=8, 8 warps) turbo4 128K ~70 us (t256's mode 1 x ~1.05 for 8 warps, not 12).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
rows check.txt t256x t256x check --types turbo4,turbo4/q8_0 --ctx 4k
TKV_SUBGROUPS=8 rows check.txt t256x8 t256x check --types turbo4 --ctx 4k
lg check
TKV_SUBGROUPS=8 loops t256x t256x profile --types turbo4 --ctx 128k --modes 0 --repeat 2
lg loops
grep -E "^== |steady path:|^MOV" $R/loops.txt
ab() {  # FILE ARGS...: main, t256x (4 subgroups), t256x with 8 subgroups, main with 8
  local f=$1 rep; shift
  for rep in 1 2; do
    rows $f "$rep main" main "$@"; rows $f "$rep t256" t256 "$@"; rows $f "$rep t256x" t256x "$@"
    TKV_SUBGROUPS=8 rows $f "$rep t256x8" t256x "$@"; TKV_SUBGROUPS=8 rows $f "$rep main8" main "$@"
  done
  lg "$f"
}
ab ab.txt profile --types turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
ab m8.txt profile --types turbo4 --ctx 32k --m 8 --modes 0 --repeat 20
ab b16.txt profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
cat $R/progress.txt $R/device.txt
grep -E "^t256x8? (turbo|q8)" $R/check.txt
python3 bench/ab_summary.py $R/ab.txt
echo "m = 8:"; python3 bench/ab_summary.py $R/m8.txt
echo "batch 16:"; python3 bench/ab_summary.py $R/b16.txt
bundle ab.txt loops.txt check.txt m8.txt b16.txt
