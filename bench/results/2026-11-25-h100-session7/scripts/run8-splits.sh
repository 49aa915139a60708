#!/usr/bin/env bash
# session 7 run 8: split counts at short and middle contexts after the in-kernel merge (plan = 0)
set -u
export TKV_CACHE_DIR=/tmp/c
source bench/gpu_env.sh
P=build-run/profile/turboprof
for round in 1 2; do
for s in 0 4 8 16 32 48 64 96 132; do
  TKV_SPLITS=$s $P profile --types f16,turbo3,turbo4 --ctx 1k,4k,8k,16k,32k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|turbo)" \
    | awk -v s=$s -v r=$round '{print r, "splits" s, $1, $4, $5, $12}'
done
done | tee $OUT/splits.txt | tail -3
python3 - $OUT/splits.txt <<'PY' > $OUT/splits-summary.txt
import sys, collections, statistics
d = collections.defaultdict(list); labels = []; sp = {}
for line in open(sys.argv[1]):
    r, l, t, c, us, n = line.split()[:6]
    d[(t, c, l)].append(float(us)); sp[(t, c, l)] = n
    if l not in labels: labels.append(l)
keys = sorted({(t, c) for t, c, _ in d}, key=lambda k: (k[0], int(k[1].rstrip('K'))))
print("type ctx " + " ".join(labels))
for t, c in keys:
    print(t, c, " ".join("%.1f(%s)" % (statistics.median(d[(t, c, l)]), sp[(t, c, l)]) if d.get((t, c, l)) else "-" for l in labels))
PY
cat $OUT/splits-summary.txt
