#!/usr/bin/env bash
# Session 29, GPU call 3: NOT RUN (the session's device time was spent); the next session's first.
# carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh base=b069712:turboprof,bench_append
# pair=1dd6ab3:turboprof,bench_append` on
# branch p7-candidate (main merged with split-append-4; its lavapipe quick suite passes, 243 of
# 243, the tc tests skipped there). main = the tc fused append without tails (split-append-3's
# form: tiles from each subgroup's last down, the acquire only where new tokens are) with the
# turbo sides' overlay: the new tokens' bits recorded in shared memory as they are quantized,
# patched into the split's first fetch of their tile (k_new_mask / v_new_mask: checked against the
# store's fields by scripts/mask_check.py), stored in the pool after its tile loop; no barrier and
# no coherent view for turbo sides (rows are read back as in split-append-3). Never run on a GPU:
# every tc test first (the plain tc kernel's source changed too, not its order of tiles: fetch
# wrappers, the query rows' loads apart from their rotation), and its calls against base's.
# Expected: the tests pass; bench_append 4K: turbo3 / turbo2 ~3-4% (run2's store knock-out: turbo3
# 3.1-3.7%), q8_0 / f16 ~1%, turbo4 ~3%; 32K ~0-1%; the timeline's 'rows' column (slot 6) the
# fresh splits' quantizer, start to new rows recorded. If so: main := p7-candidate, then the
# targets (bench/run_targets.sh) in a second call. pair (branch p7-pairing, bench only, untested):
# the candidate with the fresh split's query rows on subgroups 2 and 3, two each, while 0 and 1
# quantize (their loads in flight together now): its fresh splits' 'rows' and prologue shorter?
source bench/gpu_prelude.sh
tst app 200 build-slim/tests/test_append_decode
tst tc 150 build-slim/tests/test_decode_tc
lg "tests"
for l in base main; do
  labeled append.txt "1 $l 4k" $l 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
done
TKV_BENCH_TYPES=turbo2,turbo3,turbo4 labeled append.txt "1 pair 4k" pair 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
TKV_BENCH_TYPES=turbo3,q8_0 TKV_BENCH_APPEND_CTX=32k labeled append.txt "1 main 32k" main 45 "fused|rror" build-slim/bench/bench_append --benchmark_filter='fused/llama8b'
for l in main pair; do
  labeled tl.txt "1 $l" $l 30 "^(turbo|q8_0|f16|type|shape)|rror" $P timeline --fused --types turbo3,turbo2,q8_0 --ctx 4100 --repeat 20
done
for l in base main; do rows prof.txt "1 $l" $l profile --types turbo3,q8_0,turbo4 --ctx 8k,32k,128k --modes 0 --repeat 10; done
lg "bench"
cat $R/progress.txt
awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' $R/append.txt
cut -c1-250 $R/tl.txt
cut -c1-160 $R/prof.txt
