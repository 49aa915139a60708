#!/usr/bin/env bash
# Session 37, run 7. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh (main with issue's mma/mix kinds).
# Run 6: plain integer / fp32 work issues at 0.96-0.98 a cycle a scheduler; the tile loops run at
# ~0.5 (~2 cycles a steady instruction). Do MMAs among plain work slow its issue? mma: 8
# independent MMAs a copy (the MMA rate alone); mix: 8 integer updates (32 instructions) and 1, 2,
# 4, 8 MMAs a copy (the tile loops have 1 MMA per ~15-30 instructions); int as the baseline, in
# the same run. Prediction: if MMAs stall issue beyond their own pipe's time, mix at 1-2 MMAs a
# copy well below int's rate; if not, int's rate less the MMAs' pipe time.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 100 $P issue --kinds int,mma --body 1,4,16 --warps 4,8,12,16 --repeat 10 > $R/issue.txt 2>&1
lg "issue rc $?"
for m in 1 2 4 8; do timeout 60 $P issue --kinds mix --mmas $m --body 16 --warps 4,8,12,16 --repeat 10 >> $R/issue.txt 2>&1; lg "mix $m rc $?"; done
sass issue main issue --kinds mma,mix --body 1,4,16 --warps 16 --steps 64 --repeat 1
for m in 1 2 4 8; do TKV_CACHE_DIR=/tmp/sass-issue timeout 60 $P issue --kinds mix --mmas $m --body 16 --warps 16 --steps 64 --repeat 1 > /dev/null 2>&1; done
python3 bench/sass_dump.py /tmp/sass-out-issue2 /tmp/sass-issue > /dev/null 2>&1
for f in /tmp/sass-out-issue2/*.sass; do
  out=$(python3 bench/sass_loop.py "$f" --holds HMMA 2>&1)
  echo "$out" | grep -q "^loop" && { echo "== $(basename $f)"; echo "$out"; }
done > $R/loops.txt 2>&1
lg sass
cat $R/progress.txt $R/device.txt
grep -E "^(int|mma|mix) " $R/issue.txt
grep -E "^==|^loop|^steady|^HMMA|^SHF" $R/loops.txt | cut -c1-160
