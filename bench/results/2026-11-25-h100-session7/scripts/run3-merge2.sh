#!/usr/bin/env bash
# session 7 run 3: the merge tail (online, 16 splits per round trip) against HEAD and the first fused build; LargeContexts
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export LD_LIBRARY_PATH=$PWD/.gl/lib PATH=$PWD/.gl/bin:$PATH
build-ab/turboprof-base devices >/dev/null 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export TKV_CACHE_DIR=/tmp/c
start=$(date +%s)
build-t/test_decode_tc --gtest_brief=1 2>&1 | tail -2
for round in 1 2; do
  for l in base fused2 nocoh; do
    build-ab/turboprof-$l profile --types f16,q8_0,turbo3 --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
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
echo "ab done $(( $(date +%s) - start )) s"
left=$(( 575 - ($(date +%s) - start) ))
TKV_LARGE_CONTEXTS=1 timeout $left build-t/test_decode --gtest_filter='*LargeContexts*' > $OUT/large.txt 2>&1; echo "large rc $? at $(( $(date +%s) - start )) s"
tail -8 $OUT/large.txt
