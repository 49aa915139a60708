#!/usr/bin/env bash
# Session 15 run 3: the tail's arrival (fences) and the first tile's fetch, A/B of turboprof builds
# from 935fbdd: base; early2 (tc: the first tile's loads issued after the query loads, before the
# prologue's work); acqrel (one acquire-release atomic by invocation 0, no fences); cg (invocation 0
# alone fences, as CUDA's grid sync); nofence (diagnostic only, not correct: no fences). Then
# forced split counts at 8K and 32K (base). Binaries in .pk/bins.tar.xz.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-base
mkdir -p $OUT/t
for l in acqrel cg early2; do
  build-ab/turboprof-$l check --types turbo3,turbo2,f16 --ctx 1k,32k 2>&1 | tail -8 | sed "s/^/$l /"
done > $OUT/t/check.txt 2>&1
cat $OUT/t/check.txt
for l in base acqrel cg nofence; do
  TKV_CACHE_DIR=/tmp/c-$l build-ab/turboprof-$l profile --types turbo3,f16 --ctx 8k --modes 0 --repeat 3 >/dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sass-$l /tmp/c-$l >/dev/null 2>&1
  for f in /tmp/sass-$l/*.sass; do echo "$l $(basename $f): $(grep -c HMMA $f) HMMA; $(grep -oE '(MEMBAR|ATOMG|RED|CCTL|ERRBAR)[.A-Z0-9]*' $f | sort | uniq -c | tr '\n' ' ')"; done | grep -E "MEMBAR|ATOM"
done | tee $OUT/t/fences.txt
for round in 1 2; do
  for l in base early2 acqrel cg nofence; do
    build-ab/turboprof-$l timeline --types turbo3,turbo2,f16 --ctx 1k,8k,32k --repeat 20 2>&1 | grep -E '^(f16|turbo)' | sed "s/^/$round $l /"
  done
done > $OUT/t/timeline-ab.txt
awk '{k=$2" "$3" "$5; a[k]=a[k]" "$8"/"$9"/"$11"/"$12"/"$14"/"$15}END{for(k in a)print k, a[k]}' $OUT/t/timeline-ab.txt | sort -k2,2 -k3,3 -k1,1 | tee $OUT/t/timeline-summary.txt
for s in 16 24 32 48 64; do
  TKV_SPLITS=$s build-ab/turboprof-base timeline --types turbo3,turbo2,turbo4 --ctx 8k,32k --repeat 20 2>&1 | grep -E '^turbo' | sed "s/^/splits$s /"
done | tee $OUT/t/splits.txt
for round in 1 2; do
  for l in base early2 acqrel cg; do
    build-ab/turboprof-$l profile --workload llama8b --types turbo2,turbo3,turbo4,f16 --ctx 1k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E '^(f16|q8_0|turbo)' | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5}'
  done
done > $OUT/t/ab.txt
python3 bench/ab_summary.py $OUT/t/ab.txt | tee $OUT/t/ab-summary.txt
