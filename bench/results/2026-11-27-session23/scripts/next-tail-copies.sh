#!/usr/bin/env bash
# Prepared for the next GPU session (branch tail-copies; not run in session 23: no device time
# left). Pack: on main `bash bench/pack_gpu.sh && cp build-slim/profile/turboprof /tmp/turboprof-main`,
# then on the branch `bash bench/results/2026-11-27-session22/scripts/pack-ab.sh /tmp/turboprof-main`;
# carry [".gl", ".pk"].
# The fused tc kernel's tail quantizes the 2 M new rows two at a time (two copies of the
# quantizer's arrays), a round of ~2.5 us each: at m 8 that is 8 rounds, the tail's `attend`
# 20-24 us, the critical path of fused m 8 at 4K (session 23, run 3). The branch takes as many
# copies as the region the kernel already has holds after the rows, up to one a subgroup (4 for
# 8-row chunks in 4 subgroups, 8 for rows16 in 8), capped at 2 M: no shared memory added, the
# plans unchanged. Expected: m 8 tail attend 20 -> ~10 us (4 subgroups) / ~5 (8), fused m 8 4K
# turbo3 ~40 -> ~30 us; m 2 (4 rows, 4 copies: one round) attend 4.7 -> ~2.5; m 1 (2 rows: 2
# copies as before) unchanged, so P7 unchanged.
# Files: progress.txt, test_append_decode.txt, fused-timeline.txt, plain-timeline.txt.
source bench/gpu_prelude.sh
timeout 250 build-slim/tests/test_append_decode > $R/test_append_decode.txt 2>&1; lg "test_append_decode rc $?"
grep -E "FAILED|Failure|PASSED" $R/test_append_decode.txt | head -20 >> $R/progress.txt
for round in 1 2; do
  for bin in base new; do
    B=$P; [ $bin = base ] && B=$P-base
    for m in 1 2 3 8; do
      TKV_CACHE_DIR=/tmp/tkv-$bin timeout 60 $B timeline --fused --types turbo3,q8_0,f16 --ctx 4k,32k --m $m --repeat 5 2>&1 |
        grep -E "^(turbo|q8_0|f16|type)|rror" | sed "s/^/$round $bin m$m /" >> $R/fused-timeline.txt
    done
    lg "r$round $bin"
  done
done
# P7's extra: fused m 1 4K (call 1 of session 23) spent arrival 2.9 / merge 2.5 us against the
# plain kernel's 2.1 / 1.7 in session 18 (its tiles since equal): the plain kernel now, same
# machine, to see which of the fused call's ends grew.
for round in 1 2; do
  TKV_CACHE_DIR=/tmp/tkv-new timeout 40 $P timeline --types turbo3,q8_0,f16 --ctx 4k,32k --m 1 --repeat 5 2>&1 |
    grep -E "^(turbo|q8_0|f16|type)|rror" | sed "s/^/$round plain m1 /" >> $R/plain-timeline.txt
done
lg "plain m1"
cat $R/progress.txt $R/plain-timeline.txt
awk '$4 != "type" {print $1, $2, $3, $4, $6, $10, "attend", $20}' $R/fused-timeline.txt | sort -k4,4 -k3,3 -k5,5 -k2,2
