#!/usr/bin/env bash
# Session 26, GPU call 1 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh
# base=ff90ebc:turboprof,bench_append nost=b308477:turboprof` on branch weak-partials, e9aabdb).
# main = weak-partials: the tc kernel's partials as plain (nonprivate) accesses under the Vulkan
# memory model (the shader already compiles under it), fences with MakeAvailable / MakeVisible
# around the count, instead of `coherent` per-access availability (NVIDIA: strong stores / loads).
# base = main before (ff90ebc). nost = diagnostic only: the fused tail stores no new rows.
# Expected: main's arrival and merge phases 0.2-0.5 us shorter per call (session 15: each access
# to a coherent buffer costs; 520 -> 132 stores saved ~1 us); nost's tail 'attend' phase ~1.7 us
# shorter for turbo types if their atomics stall the barrier after them (turbo 3.5 us, q8_0 1.8).
source bench/gpu_prelude.sh
tst tc 240 build-slim/tests/test_decode_tc --gtest_filter='*AnySplitCount*:*EveryTurboPair*:*Sixteen*:*LargeContexts*'
tst app 240 build-slim/tests/test_append_decode --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
for round in 1 2; do
  for l in base main; do
    rows timeline.txt "$round $l m1" $l timeline --types turbo3,q8_0,f16 --ctx 4k,32k,128k --m 1 --repeat 5
    rows timeline.txt "$round $l m3" $l timeline --types turbo3,q8_0 --ctx 32k --m 3 --repeat 5
    rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k --m 1 --repeat 5
  done
  for l in base nost; do
    rows tail.txt "$round $l m1 fused" $l timeline --fused --types turbo3,q8_0,turbo4 --ctx 4k --m 1 --repeat 5
    rows tail.txt "$round $l m8 fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k --m 8 --repeat 5
  done
  lg "timelines r$round"
done
for l in base main; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_CACHE_DIR=/tmp/sass-$l timeout 60 $b timeline --types turbo3 --ctx 4k --m 1 --repeat 2 > /dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sass-out-$l /tmp/sass-$l > $R/sass-index-$l.txt 2>&1
  for f in /tmp/sass-out-$l/*.sass; do
    echo "== $l $f" >> $R/sass-memory.txt
    grep -oE '(MEMBAR|CCTL|FENCE|ERRBAR)[A-Z0-9_.]*|(STG|LDG|ST|LD|RED|ATOM|ATOMG)\.E[A-Z0-9_.]*' "$f" | sort | uniq -c >> $R/sass-memory.txt
  done
done
lg "sass"
cat $R/progress.txt
awk '{for(i=1;i<=NF;i++) if($i ~ /^(turbo[234]|q8_0|f16)$/) break; if(i>NF) next; pre=""; for(k=1;k<i;k++) pre=pre $k " "; print pre $i, $(i+2), "splits="$(i+3), "us="$(i+6), "pro="$(i+9), "tiles="$(i+10), "arr="$(i+12), "merge="$(i+13)}' $R/timeline.txt | sort -k3,3 -k4,4 -k5,5 -k6,6 -k2,2 -k1,1
