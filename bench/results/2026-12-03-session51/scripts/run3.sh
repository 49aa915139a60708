#!/usr/bin/env bash
# Session 51 run 3: P7's q8_0 fused step. Run 2 (session 50's next-run1.sh) put the rise between
# e1fa042 and 12690c3^: q8_0's fused step costs ~22-25 us more than its decode step at main and
# 12690c3^, ~10-12 at e1fa042 (P7 5.5-6.4% against 2.5-3.1%); the only kernel change between those
# that touches q8_0's one-row loop is f75932c, V one tile ahead (V_AHEAD). The turbo types' fused
# steps did not rise (turbo3's fell). Variants on main's kernels (k8 landed; exp-k8 SPIR-V equal):
#   vf   (branch exp-vf):   no V_AHEAD in a fused call's one-row loop (plain calls keep it)
#   nova (branch exp-nova): no V_AHEAD in the one-row loop at all (the wide form keeps it)
# Prediction: vf's q8_0 fused step ~12 us above its decode step (P7 ~3%), its decode step as main's;
# nova's decode step at 1K / 4K 0-3% below main's (run 2: e1fa042's 4K call 13.3 against 13.8 us,
# its decode step 395 against 403 us), at 32K / 128K 2-3% above (session 47 run 2).
# carry [".gl", ".pk"]; pack at main:
# bash bench/pack_gpu.sh vf=exp-vf:bench_append,test_append_decode nova=exp-nova:turboprof,bench_append,test_decode_tc,test_append_decode
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst app-vf 300 build-slim/tests/test_append_decode-vf &
tst app-nova 300 build-slim/tests/test_append_decode-nova &
tst tc-nova 300 build-slim/tests/test_decode_tc-nova &
wait; lg tests
L="main"; passed app-vf && L="$L vf"; passed app-nova && passed tc-nova && L="$L nova"
apps 3 q8_0 $L
append_summary
[[ $L == *nova* ]] && AB_FILE=nova.txt rounds 2 "main nova" profile --types q8_0 --ctx 1k,4k,32k,128k --modes 0 --repeat 20
report nova.txt
