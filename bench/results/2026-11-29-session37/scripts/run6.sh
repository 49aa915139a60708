#!/usr/bin/env bash
# Session 37, run 6. carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh (main with turboprof issue).
# Runs 4-5: the turbo loops stay near half the issue rate with 8 or 12 warps an SM and with no
# shared-memory reads at all (nolds: turbo3 128K 63.5 us for a 468-instruction steady path, 0.46).
# Calibration: how fast does this GPU issue plain integer and fp32 work through Vulkan, and does
# a loop's code size change it? turboprof issue, bodies of 1-256 copies of 8 updates (loops of
# ~30 to ~8000 instructions; the tile loops are 470-900), 4-16 warps an SM; the probe pipelines'
# SASS for the instruction counts. Prediction: fp32 near 1 instruction a cycle a scheduler; int
# near 0.5 if the integer pipe is 16 lanes wide; if code size matters, a drop past some body.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 300 $P issue --kinds int,fp32 --body 1,4,16,32,64,128,256 --warps 4,8,12,16 --repeat 10 > $R/issue.txt 2>&1
lg "issue rc $?"
sass issue main issue --kinds int,fp32 --body 1,4,16,32,64,128,256 --warps 16 --steps 256 --repeat 1
for f in /tmp/sass-out-issue/*.sass; do
  for h in SHF FFMA; do
    out=$(python3 bench/sass_loop.py "$f" --holds $h 2>&1)
    echo "$out" | grep -q "^loop" && { echo "== $(basename $f) holds $h"; echo "$out"; }
  done
done > $R/loops.txt 2>&1
lg sass
cat $R/progress.txt $R/device.txt $R/issue.txt
cut -c1-200 $R/loops.txt | grep -E "^==|^loop|^steady"
