#!/usr/bin/env bash
# Session 32, run 4. carry [".gl", ".pk"]; packed on branch tables-on-quantizers:
# `bash bench/pack_gpu.sh base=31129af:turboprof,bench_append`.
# main = tables-on-quantizers: in the fresh split's pair form, subgroups 0 and 1 (the quantizers)
# build the tables while their new rows' loads are in flight; 2 and 3 take the query rows alone.
# Expected (run 3: turbo2's fresh split 'rows' 2.24 us, prologue 3.31 after them, so the query
# subgroups' two rows and the tables set it): that prologue ~0.3-0.5 us shorter; turbo2's
# ratio_pct 5-6% -> ~4%; turbo3/4 unchanged (their fresh split is not the last).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
tst app 240 build-slim/tests/test_append_decode &
tst tc 240 build-slim/tests/test_decode_tc &
wait  # (the tests' dispatches would disturb the timings)
for rep in 1 2 3; do
  for l in base main; do
    TKV_BENCH_TYPES=turbo2,turbo3,turbo4 app append.txt "$rep $l 4k" $l fused/llama8b
  done
done
lg "bench"
for l in base main; do
  tl tl.txt "$l" $l --fused --types turbo3,turbo2,turbo4 --ctx 4097 --repeat 20
done
lg "timelines"
cat $R/progress.txt $R/device.txt
append_summary
cut -c1-250 $R/tl.txt
