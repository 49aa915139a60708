# Sourced by run1.sh and run2.sh after bench/gpu_prelude.sh: the A/B steps both ran.
# fused_timelines "LABELS" "MS": two rounds of fused timelines, each build at each m (4K-128K;
# m 8: 4K and 32K), into fused-timeline.txt.
fused_timelines() {
  local round c m ctx
  for round in 1 2; do
    for c in $1; do
      for m in $2; do
        ctx=4k,32k,128k; [ $m = 8 ] && ctx=4k,32k
        rows fused-timeline.txt "$round $c m$m" $c timeline --fused --types turbo3,q8_0,f16 --ctx $ctx --m $m --repeat 5
      done
      lg "fused timeline r$round $c"
    done
  done
}
# fused_append "LABELS": bench_append's fused rows (f16 new rows) of each build, into fused-append.txt.
fused_append() {
  local c a
  for c in $1; do
    a=build-slim/bench/bench_append-$c; [ $c = main ] && a=build-slim/bench/bench_append
    TKV_CACHE_DIR=/tmp/tkv-$c TKV_BENCH_APPEND_FORMATS=f16 timeout 90 $a --benchmark_filter='fused' 2>&1 |
      grep -E "fused|rror" | sed "s/^/$c /" >> $R/fused-append.txt
    lg "bench_append $c"
  done
}
# qrows8_ab "MS": main against qrows8, the m 3 32K timeline, then two rounds of profiles at each m,
# their medians in qrows8-summary.txt.
qrows8_ab() {
  local bin round m
  for bin in main qrows8; do
    rows qrows8-timeline.txt $bin $bin timeline --types turbo3,turbo4 --ctx 32k --m 3 --repeat 5
    lg "qrows8 timeline $bin"
  done
  for round in 1 2; do
    for bin in main qrows8; do
      for m in $1; do
        rows qrows8-profile.txt "$round $bin-m$m" $bin profile --types turbo3,turbo2,turbo4 --ctx 8k,32k,128k --m $m --modes 0 --repeat 10
      done
      lg "qrows8 r$round $bin"
    done
  done
  python3 bench/ab_summary.py $R/qrows8-profile.txt > $R/qrows8-summary.txt 2>&1
}
