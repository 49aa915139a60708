#!/usr/bin/env bash
# session 7 run 5: the tc query prologue in registers (shuffle Hadamard) against HEAD
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export LD_LIBRARY_PATH=$PWD/.gl/lib PATH=$PWD/.gl/bin:$PATH
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f $ICD ] && export VK_DRIVER_FILES=$ICD
export TKV_CACHE_DIR=/tmp/c
start=$(date +%s)
for t in test_decode_tc test_decode; do
  timeout 240 build-t/$t --gtest_brief=1 > /tmp/$t.txt 2>&1; rc=$?
  echo "$t rc $rc at $(( $(date +%s) - start )) s"; grep -E "Failure|error|PASSED|FAILED" /tmp/$t.txt | head -8
done 2>&1 | tee $OUT/tests.txt
for round in 1 2; do
  for l in base qreg; do
    build-ab/turboprof-$l profile --types turbo2,turbo3,turbo4 --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
python3 - $OUT/ab.txt <<'PY' > $OUT/ab-summary.txt
import sys, collections, statistics
d = collections.defaultdict(list); labels = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7: continue
    r, l, t, v, m, c, us = f[:7]
    d[(t, m, c, l)].append(float(us))
    if l not in labels: labels.append(l)
def ck(c): return float(c.rstrip('K')) * (1024 if c.endswith('K') else 1)
keys = sorted({k[:3] for k in d}, key=lambda k: (k[0], k[1], ck(k[2])))
print("type mode ctx " + " ".join(labels))
for k in keys:
    print(*k, " ".join("%.1f" % statistics.median(d[k + (l,)]) if d.get(k + (l,)) else "-" for l in labels))
PY
cat $OUT/ab-summary.txt
echo "done $(( $(date +%s) - start )) s"
