#!/usr/bin/env bash
# Session 17 run 3: the final plan (new2: wide tc workgroups where their splits are >= 8 steps,
# two an SM; else chunks of 4 rows) against base (74411fe) on the same machine. One output file.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-new2
mkdir -p $OUT/r
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for m in 8 2 3; do
  timeout 25 build-ab/turboprof-new2 profile --types turbo3,turbo4 --ctx 8k,32k --m $m --modes 0 --repeat 10 2>/dev/null | grep -E "^turbo" | sed "s/^/new2 m$m /"
done
timeout 20 build-ab/turboprof-new2 profile --workload qwen7b --types turbo3,turbo4 --ctx 8k,32k --modes 0 --repeat 10 2>/dev/null | grep -E "^turbo" | sed "s/^/new2 qwen7b /"
for m in 8 2; do
  timeout 25 build-ab/turboprof-base profile --types turbo3,turbo4 --ctx 32k --m $m --modes 0 --repeat 10 2>/dev/null | grep -E "^turbo" | sed "s/^/base m$m /"
done
} > $OUT/r/run3.txt 2>&1
cat $OUT/r/run3.txt
