#!/usr/bin/env bash
# Session 17 run 1: the tc kernel's wide form (5-8 query rows a workgroup: 8 rows' q_hi in the MMAs'
# columns, q_lo and w_lo in matrices of their own) and the O rescale only when a maximum grew.
# base = 74411fe (session 16's last commit), new = the working tree. Binaries in .pk/bins.tar.xz.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-ab/turboprof-base
mkdir -p $OUT/t
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/t/device.txt 2>&1
timeout 110 build-slim/tests/test_decode_tc 2>&1 | grep -E "^tc |OK|FAILED|PASSED|Failure|error" > $OUT/t/test_decode_tc.txt
tail -3 $OUT/t/test_decode_tc.txt
for m in 2 8 1 3; do
  for l in base new; do
    TKV_LOG=info TKV_PIPELINE_STATS=1 timeout 45 build-ab/turboprof-$l profile --types turbo3,turbo4,turbo2 --ctx 8k,32k --m $m --modes 0 --repeat 10 > $OUT/t/p-$l-m$m.txt 2>$OUT/t/p-$l-m$m.log
    grep -E '^(turbo)' $OUT/t/p-$l-m$m.txt | awk -v l=$l -v m=$m '{print l, "m" m, $1, $2, $3, $4, $5}'
  done
done | tee $OUT/t/ab.txt
for l in base new; do
  timeout 30 build-ab/turboprof-$l profile --workload qwen7b --types turbo3,turbo4 --ctx 8k,32k --modes 0 --repeat 10 2>/dev/null | grep -E '^turbo' | sed "s/^/$l qwen7b /"
done | tee $OUT/t/qwen.txt
grep -hE "registers|spill" $OUT/t/p-new-m2.log $OUT/t/p-new-m1.log | sort | uniq | head -20 > $OUT/t/regs.txt
timeout 70 build-slim/tests/test_append_decode --gtest_filter='AppendDecode.EveryTypeAndShape:AppendDecode.EveryVariant:AppendDecode.TailEdges' 2>&1 | grep -E "OK|FAILED|PASSED|Failure" > $OUT/t/test_append.txt
tail -2 $OUT/t/test_append.txt
