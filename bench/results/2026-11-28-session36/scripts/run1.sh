#!/usr/bin/env bash
# Session 36, run 1. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh (the tree's binaries only).
# 1. Main's complete P1-P8 table (session 35's lost its P1/P2 rows to the 8-file limit), P3c now
#    against llama.cpp's documented figures.
# 2. The tile loop's machine code per type at 128K (plain decode, m 1, llama8b), for the issue
#    bound: instructions per 16-token tile x tiles per call / (SMSPs x clock) against each target's
#    bound; the SM clock sampled during a 128K profile.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit --format=csv > $R/device.txt 2>&1
targets 330
for t in turbo2 turbo3 turbo4 q8_0 f16; do
  sass "$t" main profile --types $t --ctx 128k --repeat 2
  big=$(ls -S /tmp/sass-out-$t/*.sass 2>/dev/null | head -1)
  { echo "== $t $(basename "$big") registers R$(grep -o 'R[0-9]\+' "$big" | sed 's/R//' | sort -n | tail -1)";
    python3 bench/sass_loop.py "$big"; } >> $R/loops.txt 2>&1
  rm -f $R/sass-$t.tar.gz
done
lg sass
( for i in $(seq 20); do nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw --format=csv,noheader; sleep 0.5; done ) > $R/clocks.txt 2>&1 &
timeout 30 $P profile --types turbo3 --ctx 128k --repeat 2000 > /dev/null 2>&1
wait
lg clocks
cat $R/progress.txt $R/device.txt $R/loops.txt $R/clocks.txt | cut -c1-200
bundle targets.txt loops.txt device.txt clocks.txt
