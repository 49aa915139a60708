#!/usr/bin/env bash
# Session 36, run 3. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh
#   nopf=exp-nopf:turboprof,test_decode_tc qsm=exp-qsm:turboprof,test_decode_tc both=exp-both:turboprof,test_decode_tc
# Question: does the turbo tile loop get cheaper with fewer registers? Run 2: turbo3's loop is
# 710 instructions a tile of which 160 are register copies (MOV), at R157 (3 workgroups an SM;
# 4 need <= 128). nopf: no whole-tile prefetch for turbo sides (rows' schedule: V at the top of
# a step, the next K after the scores; ~-14 registers). qsm: Qb's fragments read from shared
# memory per block (-16 registers, +8 shared loads a tile; session 5: 2-4% slower at the time).
# both: the two. Prediction: nopf and qsm alone within +-3% (no occupancy step); both at <= 128
# registers would allow a fourth workgroup an SM, which the plan does not ask for (3 an SM): so
# also 128K with TKV_SPLITS=66 (4 an SM x 132 / 8 groups) against the plan.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for l in nopf qsm both; do tst "tc-$l" 200 build-slim/tests/test_decode_tc-$l; done
for l in main nopf qsm both; do
  sass "$l" "$l" profile --types turbo3 --ctx 128k --repeat 2
  for f in /tmp/sass-out-$l/*.sass; do
    grep -q HMMA "$f" || continue
    { echo "== $l $(basename "$f") registers R$(grep -o 'R[0-9]\+' "$f" | sed 's/R//' | sort -n | tail -1)";
      python3 bench/sass_loop.py "$f"; } >> $R/loops.txt 2>&1
  done
  rm -f $R/sass-$l.tar.gz $R/sass-$l.txt
done
lg sass
for rep in 1 2; do
  for l in main nopf qsm both; do
    rows ab.txt "$rep $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 20
  done
done
lg ab
export TKV_SPLITS=66
for l in main both; do
  rows ab.txt "s66 $l" "$l" profile --types turbo2,turbo3,turbo4 --ctx 128k --modes 0 --repeat 20
done
unset TKV_SPLITS
lg splits
cat $R/progress.txt $R/device.txt
cut -c1-300 $R/loops.txt
cat $R/ab.txt
bundle ab.txt loops.txt device.txt tests.txt
