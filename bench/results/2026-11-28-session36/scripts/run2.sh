#!/usr/bin/env bash
# Session 36, run 2. carry [".gl", ".pk"]; the same pack as run 1 (main, 9ba4a8e's binaries).
# Run 1's table lost P4: its budget ran out before the PyTorch step. Here P4's two figures in one
# call (PyTorch SDPA at 128K, batch 1; turbo3 at 128K), then the tile loop's machine code per type
# at 128K (run 1 took the largest pipeline, a scalar one: now every pipeline with HMMA).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 150 python3 bench/peer_pytorch.py --ctx 128k --batch 1 --repeat 50 --out $R/peer.json > $R/peer-log.txt 2>&1
lg "peer rc $?"
timeout 60 $P profile --workload llama8b --ctx 128k --types turbo3 --modes 0 --repeat 20 --json > $R/profile-turbo3.json 2>> $R/peer-log.txt
lg "profile rc $?"
python3 bench/targets.py $R/peer.json $R/profile-turbo3.json > $R/p4.txt 2>&1
for t in turbo2 turbo3 turbo4 q8_0 f16; do
  sass "$t" main profile --types $t --ctx 128k --repeat 2
  for f in /tmp/sass-out-$t/*.sass; do
    grep -q HMMA "$f" || continue
    { echo "== $t $(basename "$f") registers R$(grep -o 'R[0-9]\+' "$f" | sed 's/R//' | sort -n | tail -1)";
      python3 bench/sass_loop.py "$f"; } >> $R/loops.txt 2>&1
  done
  rm -f $R/sass-$t.tar.gz $R/sass-$t.txt
done
lg sass
cat $R/progress.txt $R/device.txt $R/p4.txt | cut -c1-220
cut -c1-400 $R/loops.txt
bundle p4.txt loops.txt device.txt
