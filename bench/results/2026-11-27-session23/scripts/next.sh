#!/usr/bin/env bash
# Prepared for the next GPU session (not run in session 23: no device time left). Pack on main
# with `bash bench/results/2026-11-27-session23/scripts/pack-next.sh` (main's binaries, plus
# turboprof / bench_append / test_append_decode built at branches tail-copies and merge-batch17),
# carry [".gl", ".pk"]; one call, ~8 minutes (timeout_s 600).
#
# 1. merge-batch17: the last split merges the partials 17 slots a batch (one L2 round trip each),
#    not 16. A fused call has its tail's slot too: 33 slots at m 1 4K-32K took 3 round trips, 2
#    now; 49 (m 1 128K plain, 48 + 1 fused) 4 -> 3. Session 23's fused m 1 4K timeline: merge
#    2.5 us (session 18's plain: 1.7). Expected: fused m 1 merge up to -0.9 us a call (P7's
#    extra is ~0.85 us a layer, 6-8%), if the third batch is what it pays: session 18's fused
#    kernel merged 33 slots in 1.62 us, its plain one 32 in 1.65, so maybe not; plain m 1 128K
#    up to -0.8 us; plain 32-slot calls unchanged.
# 2. tail-copies: the fused tail quantizes up to one new row a subgroup at once (as many copies
#    of the quantizer's arrays as the region holds; 2 before). Expected: m 8's tail rounds 8 ->
#    4 (8-row chunks) or 2 (rows16, 8 subgroups), its attend 20 -> ~10 / ~5 us; fused m 8 4K
#    turbo3 ~40 -> ~30 us; m 1 unchanged.
# Files: progress.txt, tests.txt, timeline.txt, append.txt, profile.txt, summary.txt.
source bench/gpu_prelude.sh
# (Filtered: a cold machine compiles every pipeline a test uses, ~160 s for the whole of
# test_append_decode. The merge: splits 0-40 and fused tails; the tail: m 1-8 in every tc form.)
tst merge17-tc 150 build-slim/tests/test_decode_tc-merge17 --gtest_filter='*AnySplitCount*:*EveryTurboPair*'
tst merge17-append 150 build-slim/tests/test_append_decode-merge17 --gtest_filter='*TailEdges*'
tst copies-append 150 build-slim/tests/test_append_decode-copies --gtest_filter='*TailEdges*:*EveryTypeAndShape*:*Sixteen*'
for round in 1 2; do
  for l in main merge17 copies; do
    if [ $l != copies ]; then
      rows timeline.txt "$round $l m1 plain" $l timeline --types turbo3,q8_0,f16 --ctx 4k,128k --m 1 --repeat 5
      rows timeline.txt "$round $l m1 fused" $l timeline --fused --types turbo3,q8_0,f16 --ctx 4k,32k --m 1 --repeat 5
    fi
    if [ $l != merge17 ]; then
      rows timeline.txt "$round $l m8 fused" $l timeline --fused --types turbo3,q8_0,f16 --ctx 4k,32k --m 8 --repeat 5
      rows timeline.txt "$round $l m2 fused" $l timeline --fused --types turbo3,q8_0 --ctx 4k,32k --m 2 --repeat 5
    fi
  done
  lg "timelines r$round"
done
for round in 1 2; do
  for l in main merge17; do rows profile.txt "$round $l" $l profile --ctx 4k,8k,32k,128k --m 1 --modes 0 --repeat 20; done
  lg "profile r$round"
done
python3 bench/ab_summary.py $R/profile.txt > $R/summary.txt 2>&1
for l in main merge17; do app append.txt $l $l fused; lg "bench_append $l"; done
cat $R/progress.txt $R/summary.txt
grep -oE "^[a-z0-9]+ fused/llama8b/[a-z0-9_]+/f[0-9]+|ratio_pct=[0-9.]+" $R/append.txt | paste - - | sort
