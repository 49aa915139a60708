#!/usr/bin/env bash
# Session 27, GPU call 6 (carry [".gl", ".pk"]; pack: `bash bench/pack_gpu.sh base=c78de8e:turboprof`
# on branch turbo4-neg0-table, 891a778). main there = turbo4's table with its first negative bit
# folded in (128 entries x 16 copies, 16 KB: shared memory 12.5 -> 20.5 KB at 4 subgroups), so
# that a pair's sign work is one shift and a masked XOR per half instead of two shifts, two masks,
# an OR and two XORs; base = main (c78de8e).
# Expected: turbo4's tile loop (ALU-bound: mode 1 34.8 us at 32K against turbo3's 25.3) ~100-150
# instructions a tile fewer: turbo4 32K 38.4 -> ~35-36, 8K 18.4 -> ~17.5; 128K maybe even (its 4-
# subgroup plan loses the third workgroup an SM to the larger table); turbo4 / turbo3 pairs
# (24 KB of tables) slower.
source bench/gpu_prelude.sh
tst tc 200 build-slim/tests/test_decode_tc
for round in 1 2; do
  for l in base main; do
    rows ab.txt "$round $l m1" $l profile --types turbo4 --ctx 8k,32k,128k --modes 0,1 --repeat 20
    rows ab.txt "$round $l m3" $l profile --types turbo4,turbo4/turbo3 --ctx 32k --m 3 --modes 0 --repeat 20
    rows ab.txt "$round $l pair" $l profile --types turbo4/turbo3,turbo3/turbo4 --ctx 32k --modes 0 --repeat 20
  done
  lg "ab r$round"
done
for l in base main; do
  b=$P; [ $l = main ] || b=$P-$l
  TKV_PIPELINE_STATS=1 TKV_LOG=info TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b profile --types turbo4 --ctx 8k,128k --modes 0 --repeat 1 2>&1 | grep -E 'decode_tc' | sed "s/^/$l /" | sed 's/.*built pipeline //' | head -6 >> $R/stats.txt
  TKV_LOG=debug TKV_CACHE_DIR=/tmp/tkv-stats-$l timeout 60 $b profile --types turbo4 --ctx 128k --modes 0 --repeat 1 2>&1 | grep -m2 'plan' | sed "s/^/$l /" >> $R/stats.txt
done
cat $R/progress.txt
grep -v ' type ' $R/ab.txt | awk '{print $1, $2, $3, $4, $6, $7, $8, "splits="$15}' | sort -k4,4 -k3,3 -k5,5 -k6,6 -k2,2 -k1,1
cat $R/stats.txt
