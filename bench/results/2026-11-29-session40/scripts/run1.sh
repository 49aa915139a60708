#!/usr/bin/env bash
# Session 40, run 1. carry [".gl", ".pk"]; pack (at exp-t2pair): bash bench/pack_gpu.sh base=main:turboprof,bench_append
# t2pair (main here = the exp-t2pair tree): turbo2's tc table indexed by two pairs' 4-bit fields,
# 256 entries of two exact f16 pairs x 16 copies (32 KB, TAB256, one workgroup an SM of eight
# subgroups), so one shared read serves pairs 2i and 2i+1. base = main at d1893af.
# Prediction: if the two pairs' reads merge (one LDS.64 where there were two LDS.64), turbo2's
# steady path loses ~32 reads and ~60 address instructions of its 486: 128K 61.5 -> ~52 us, 32K
# -10%; 1K-2K unchanged (the plan rule keeps the 16-entry table there). Also P7 (bench_append's
# fused step ratio) with session 39's turbo4 table, which was not measured.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
loops t2p main profile --types turbo2 --ctx 128k --modes 0 --repeat 1
loops base base profile --types turbo2 --ctx 128k --modes 0 --repeat 1
wait
ab() {  # FILE ARGS...
  local f=$1 rep l; shift
  for rep in 1 2; do for l in base main; do rows $f "$rep $l" "$l" "$@"; done; done
  lg "$f"
}
ab ab.txt profile --types turbo2 --ctx 1k,2k,4k,8k,32k,128k --modes 0 --repeat 20
ab m2.txt profile --types turbo2 --ctx 8k,32k --m 2 --modes 0 --repeat 20
ab m3.txt profile --types turbo2 --ctx 8k,32k --m 3 --modes 0 --repeat 20
ab m8.txt profile --types turbo2 --ctx 32k --m 8 --modes 0 --repeat 20
ab b16.txt profile --types turbo2 --ctx 8k --batch 16 --modes 0 --repeat 20
[ $((SECONDS-T0)) -lt 430 ] && ab mix.txt profile --types turbo2/q8_0,q8_0/turbo2,turbo2/f16 --ctx 8k,32k --modes 0 --repeat 20
[ $((SECONDS-T0)) -lt 480 ] && apps 1 turbo2,turbo3,turbo4 base main
cat $R/progress.txt $R/device.txt
for f in ab m2 m3 m8 b16 mix; do [ -f $R/$f.txt ] && { echo "== $f"; python3 bench/ab_summary.py $R/$f.txt; }; done
[ -f $R/append.txt ] && append_summary
grep -E "^==|steady|static|estimate" $R/loops.txt | head -20
bundle ab.txt tests.txt loops.txt append.txt
