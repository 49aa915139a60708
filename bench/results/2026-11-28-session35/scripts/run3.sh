#!/usr/bin/env bash
# Session 35, run 3. carry [".gl", ".pk"]; the same pack as run 2 (qr-regs; base=5d3d556, qrr=1759d2e).
# Run 2: qrw and qrr took turbo2's ratio_pct 5.4 -> 2.0 and the new rows' time ~0.8 us shorter in
# every type, but turbo3's ratio_pct rose 2.1 -> 3.5-3.8 (fused step +7 us, decode step the same)
# while its timeline at 4097 did not move. Question: where turbo3's fused steps past 4097 lose:
# timelines at 4098, 4120 and 4150 (base, main = qrw), bench_append's turbo3 rows again, and the
# SASS of the bench's own (uninstrumented) fused turbo3 pipelines, base and main.
# Then main's (qrw's) P1-P8 table.
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
for c in 4098 4120 4150; do
  for l in base main; do
    tl tl.txt "$l $c" "$l" --fused --types turbo3,turbo2 --ctx $c --repeat 20 --workgroups --out /tmp/tlw-$l-$c
    python3 bench/timeline_groups.py /tmp/tlw-$l-$c/timeline.json | sed "s/^/$l /" >> $R/groups.txt
  done
done
lg timelines
apps 2 turbo3 base main
for l in base main; do
  b=build-slim/bench/bench_append; [ $l = main ] || b=$b-$l
  rm -rf /tmp/sb-$l /tmp/sbo-$l
  TKV_CACHE_DIR=/tmp/sb-$l TKV_BENCH_TYPES=turbo3 timeout 60 $b --benchmark_filter=fused/llama8b/turbo3/f32 > /dev/null 2>&1
  python3 bench/sass_dump.py /tmp/sbo-$l /tmp/sb-$l > $R/sass-bench-$l.txt 2>&1
  big=$(ls -S /tmp/sbo-$l/*.sass | head -2)
  for f in $big; do grep -c "LDL\|STL" $f | sed "s|^|$l $(basename $f) local accesses: |" >> $R/sass-bench-$l.txt; done
  (cd /tmp/sbo-$l && tar czf $R/sass-bench-$l.tar.gz $(ls -S *.sass | head -2))
done
lg sass
targets 370
cat "$R/progress.txt" "$R/device.txt" "$R/groups.txt" $R/sass-bench-*.txt
append_summary
