#!/usr/bin/env bash
# A/B of builds in one GPU session: every turboprof binary in $AB_DIR (default build-ab/, named
# turboprof-<label>) profiles the same points, in alternating rounds so that drift of the GPU's
# clock or temperature falls on every build alike. Run on the device machine (bench/README.md):
#   AB_ARGS="--ctx 8k,128k --types turbo3" bash bench/ab.sh     -> $OUT/ab.txt
# Lines: round label type variant mode context us ... (turboprof's table columns).
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export LD_LIBRARY_PATH="$PWD/.gl/lib:${LD_LIBRARY_PATH:-}"
DIR=${AB_DIR:-build-ab}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
bins=("$DIR"/turboprof-*)
"${bins[0]}" devices >/dev/null 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export TKV_CACHE_DIR=/tmp/tkv-pipelines
nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv -lms 500 > "$OUT/ab-smi.csv" 2>&1 &
smi=$!
for round in $(seq 1 "${AB_ROUNDS:-2}"); do
  for bin in "${bins[@]}"; do
    label=${bin##*/turboprof-}
    "$bin" profile --workload llama8b --modes 0 --repeat 20 ${AB_ARGS:---ctx 1k,8k,32k,128k} 2>&1 \
      | grep -E "^(f16|q8_0|turbo)" | awk -v r="$round" -v l="$label" '{print r, l, $1, $2, $3, $4, $5}'
  done
done | tee "$OUT/ab.txt"
kill $smi
echo "SM clock samples:"; awk -F, 'NR>1{print $2}' "$OUT/ab-smi.csv" | sort | uniq -c | sort -rn | head -4
# Per (type, context): the median over rounds of each build, side by side.
python3 - "$OUT/ab.txt" <<'PY'
import sys, collections, statistics
d = collections.defaultdict(list)
labels = []
for line in open(sys.argv[1]):
    r, l, t, v, m, c, us = line.split()[:7]
    d[(t, c, l)].append(float(us))
    if l not in labels: labels.append(l)
keys = sorted({(t, c) for t, c, _ in d}, key=lambda k: (k[0], int(k[1].rstrip('K'))))
print("type ctx " + " ".join(labels))
for t, c in keys:
    print(t, c, " ".join("%.1f" % statistics.median(d[(t, c, l)]) if d.get((t, c, l)) else "-" for l in labels))
PY
