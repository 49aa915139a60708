#!/usr/bin/env bash
# session 7 run 2: the fused split merge (one dispatch per call): GPU suites, then A/B against HEAD
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export LD_LIBRARY_PATH=$PWD/.gl/lib PATH=$PWD/.gl/bin:$PATH
build-ab/turboprof-base devices >/dev/null 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export TKV_CACHE_DIR=/tmp/c
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/dev.txt 2>&1
start=$(date +%s)
for t in test_vk_runtime test_plan test_cache test_decode_tc test_decode_modes test_variants_modes test_decode; do
  timeout 120 build-t/$t --gtest_brief=1 2>&1 | tail -4 | sed "s/^/$t: /"
done > $OUT/tests.txt 2>&1
grep -E "PASSED|FAILED|rror" $OUT/tests.txt | head -20
echo "tests $(( $(date +%s) - start )) s"
for round in 1 2; do
  for l in base fused; do
    build-ab/turboprof-$l profile --ctx 64,1k,4k,8k,32k,128k --modes 0 --repeat 20 2>&1 | grep -E "^(f16|q8_0|turbo)" \
      | awk -v r=$round -v l=$l '{print r, l, $1, $2, $3, $4, $5, $12}'
  done
  echo "round $round at $(( $(date +%s) - start )) s" >&2
done > $OUT/ab.txt
for l in base fused; do
  build-ab/turboprof-$l sweep --ctx 1k,4k --types f16,turbo3 --repeat 10 2>&1 | grep -E "^(f16|turbo3)" | sed "s/^/$l /"
done > $OUT/step.txt 2>&1
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
cat $OUT/ab-summary.txt; cat $OUT/step.txt
echo "done $(( $(date +%s) - start )) s"
