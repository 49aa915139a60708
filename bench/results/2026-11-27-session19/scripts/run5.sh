#!/usr/bin/env bash
# Session 19 run 5: head2 = run 4's head with q8_0's wide form back on whole tiles at the top of
# its step (k_ahead off where K is q8_0 and ROWS > 4): test_decode_tc; f16 and q8_0 m 1 / 3 / 8 at
# 32K against run 4's head, with the tc pipelines' registers. Then P7's page diagnostic:
# bench_append's fused rows (f32) at 4095 old tokens (the new token the last of page 64: no new
# page, the same splits as at 4096) against 4096 (a new page: a page-table update and a barrier).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-head2
R=/tmp/run5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
timeout 100 build-ab/test_decode_tc > $R/tests.txt 2>&1
for l in head head2; do
  for m in 1 3 8; do
    TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 40 build-ab/turboprof-$l profile --types f16,q8_0 --ctx 32k --m $m --modes 0 --repeat 10 2>&1 | grep -E '^(f16|q8_0)|pipeline decode_tc|rror' | sed "s/^/1 $l-m$m /"
  done
done > $R/profile.txt 2>&1
grep -v Register $R/profile.txt > $R/times.txt; python3 bench/ab_summary.py $R/times.txt > $R/summary.txt 2>&1
for ctx in 4095 4096; do
  TKV_BENCH_TYPES=f16,q8_0,turbo3,turbo4 TKV_BENCH_APPEND_CTX=$ctx TKV_BENCH_APPEND_FORMATS=f32 timeout 80 build-ab/bench_append-head2 \
    --benchmark_filter='fused/' --benchmark_out=$R/append-$ctx.json --benchmark_out_format=json > $R/append-$ctx.txt 2>&1
done
tar czf $OUT/run5.tar.gz -C /tmp run5
grep -E "FAILED|PASSED|Failure" $R/tests.txt | tail -5; cat $R/summary.txt
grep Register $R/profile.txt | grep -o "^1 [a-z0-9-]*\|constants \[[0-9,]*\] Register Count = [0-9]*" | paste - - | sort -u
for f in $R/append-*.txt; do echo $f; grep -o "fused/llama8b/[a-z0-9_]*/f32\|decode_step_us=[0-9.]*\|fused_step_us=[0-9.]*\|ratio_pct=[0-9.]*" $f | paste - - - - ; done
