#!/usr/bin/env bash
# One batched GPU session on the device machine (see DEVELOPERS.md): unpack the Vulkan loader
# carried in .gl/, point at the carried libraries, then run the steps named in $@ from this list,
# writing everything under $OUT:
#   devices   turboprof devices (text and JSON)
#   tests     the decode/cache/runtime suites, plus exactness at 32K and 128K
#   profile   turboprof profile, llama8b, every type, mode 0, 1K..128K
#   variants  turboprof profile, llama8b, every type x variant x mode 0-4, 8K, 32K, 128K
#   ab        A/B of the turboprof builds in $AB_DIR (build-ab/turboprof-<label>), rounds alternating
#   tc        the tensor-core variant: test_decode_tc, then tc vs smem profiles
#   splits    short contexts: µs per call at the plan's split count and at forced counts
#   inspect   what the compiler made of the decode pipelines: statistics and the SASS from the
#             pipeline cache (bench/sass_dump.py; everything in $OUT/inspect.tar.gz)
#   khr       the tc kernel with KHR matrices (the default) against NV (TKV_COOPMAT_KHR=0): tests and times
#   timeline  test_timeline, then turboprof timeline: every type's phases at 1K-128K (where the
#             per-call fixed cost goes: launch, prologue, tiles, partials, merge, output)
#   targets   bench/run_targets.sh: correctness, sweep, profiles, append, PyTorch peer, then the
#             P1-P8 table (3 files: targets.txt, targets-log.txt, targets.tar.gz)
set -uo pipefail
B=${TKV_BUILD:-build}
AB_DIR=${AB_DIR:-build-ab}
probe=$B/profile/turboprof
[ -x "$probe" ] || probe=$(ls "$AB_DIR"/turboprof-* 2>/dev/null | head -1)
source bench/gpu_env.sh "$probe"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# At most 8 files come back from $OUT: keep to devices.txt, tests.txt and two folders of three.
for step in "$@"; do
  case "$step" in
    devices)
      (nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
       $B/profile/turboprof devices; $B/profile/turboprof devices --json) 2>&1 | tee "$OUT/devices.txt" | head -12 ;;
    tests)
      (for t in test_vk_runtime test_cache test_plan test_decode test_decode_modes test_variants_modes test_decode_tc; do
         $B/tests/$t --gtest_brief=1; done
       TKV_LARGE_CONTEXTS=1 $B/tests/test_decode --gtest_filter='*LargeContexts*') 2>&1 | tee "$OUT/tests.txt" | tail -40 ;;
    profile)
      $B/profile/turboprof profile --workload llama8b --ctx 1k,4k,8k,32k,128k --modes 0 --repeat 30 \
        --out "$OUT/profile" > "$OUT/profile.txt" 2>&1; mv "$OUT/profile.txt" "$OUT/profile/table.txt"
      cat "$OUT/profile/table.txt" ;;
    variants)
      $B/profile/turboprof profile --workload llama8b --ctx 8k,32k,128k --variants all --modes 0-4 --repeat 20 \
        --out "$OUT/variants" > "$OUT/variants.txt" 2>&1; mv "$OUT/variants.txt" "$OUT/variants/table.txt"
      grep -E " 0 +[0-9]+K" "$OUT/variants/table.txt" | head -60 ;;
    diag)  # compiler statistics of decode pipelines across dims-per-lane and unroll (tuning knobs),
           # with the SM clock logged (an idle H200 sits at 345 MHz; the warm-up waits for it)
      mkdir -p "$OUT/diag"
      nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu \
        --format=csv -lms 250 > "$OUT/diag/smi.csv" 2>&1 &
      smi=$!
      TKV_PIPELINE_STATS=1 TKV_LOG=debug $B/profile/turboprof profile --workload llama8b --ctx ${DIAG_CTX:-32k,128k} \
        --types ${DIAG_TYPES:-f16,turbo3} --variants ${DIAG_VARIANTS:-mag4} --modes ${DIAG_MODES:-0} \
        --dpl ${DIAG_DPL:-4,8,16} --unroll ${DIAG_UNROLL:-1,2,4,8} --repeat 20 > "$OUT/diag/run1.txt" 2>&1
      kill $smi
      awk -F, 'NR>1{print $2}' "$OUT/diag/smi.csv" | sort | uniq -c | sort -rn | head -5
      grep -E "built pipeline decode " "$OUT/diag/run1.txt" | sed 's/.*constants //' | cut -c1-200 | head -60
      grep -E "^(f16|q8_0|turbo[234]) " "$OUT/diag/run1.txt" | awk '{print $1, $2, $3, $4, $5, $11, $12, $13, $14}' ;;
    tc)  # the tensor-core variant: its exactness suite, then tc against smem (modes 0 and 1)
      mkdir -p "$OUT/tc"
      (TKV_LOG=info $B/tests/test_decode_tc; $B/tests/test_variants_modes --gtest_brief=1) 2>&1 | tee "$OUT/tc/tests.txt" | tail -25
      $B/profile/turboprof profile --workload ${TC_WORKLOAD:-llama8b} --ctx ${TC_CTX:-1k,8k,32k,128k} \
        --types ${TC_TYPES:-turbo2,turbo3,turbo4} --variants smem,tc --modes 0,1 --repeat 20 \
        --out "$OUT/tc/profile" > "$OUT/tc/profile.txt" 2>&1
      grep -E "^(turbo|f16|q8)" "$OUT/tc/profile.txt" | awk '{print $1, $2, $3, $4, $5, $11, $12}' ;;
    sweep)  # depth sweep of every type (policy's variant): table, CSV, JSON, SVG
      $B/profile/turboprof sweep --workload llama8b --ctx 1k..128k --repeat 20 --out "$OUT/sweep" 2>&1 | tail -30 ;;
    order)  # does the order of measurements change a point? (profile vs sweep disagreed 5x at 8K)
      P=$B/profile/turboprof
      TKV_LOG=trace $P profile --types turbo3 --ctx 8k --variants mag4 --modes 0 --repeat 20 2>&1 | grep -E "memory type|^turbo3" | sort | uniq -c | head
      $P sweep --types turbo3 --ctx 8k --repeat 20 2>&1 | grep -E "^turbo3"
      $P profile --types f16,turbo3 --ctx 8k --variants lut8,mag4 --modes 0,1 --repeat 20 2>&1 | grep -E "^(f16|turbo3)"
      $P profile --types turbo3 --ctx 8k --variants mag4 --modes 0 --repeat 20 2>&1 | grep -E "^turbo3" ;;
    modes01)  # mode 0 against mode 1 for every type, the policy's variant
      $B/profile/turboprof profile --workload llama8b --ctx 8k,32k,128k --modes 0,1 --repeat 20 2>&1 \
        | grep -E "^(f16|q8_0|turbo)" | awk '{print $1, $2, $3, $4, $5, $8, $10, $11}' ;;
    rounds)  # every type, modes 0 and 1, three rounds with the GPU's clocks logged alongside: the
             # minimum over rounds filters out the stretches when the whole GPU runs slower
      mkdir -p "$OUT/rounds"
      nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
        --format=csv -lms 250 > "$OUT/rounds/smi.csv" 2>&1 &
      smi=$!
      for r in 1 2 3; do
        $B/profile/turboprof profile --workload llama8b --ctx 8k,32k,128k --modes 0,1 --repeat 20 ${ROUND_ARGS:-} \
          2>&1 | grep -E "^(f16|q8_0|turbo)" | sed "s/^/round$r /"
      done > "$OUT/rounds/table.txt"
      kill $smi
      sort -k2,2 -k5,5 -k4,4n "$OUT/rounds/table.txt" | awk '{print $1, $2, $3, $4, $5, $6}' | head -80 ;;
    splits)  # short contexts: the plan's split count (0) against forced counts, f16 and turbo3
      for s in 0 1 2 4 8 16 32; do
        TKV_SPLITS=$s $B/profile/turboprof profile --workload llama8b --types f16,turbo3 --ctx 1k,2k,4k,8k \
          --modes 0 --repeat 20 2>&1 | grep -E "^(f16|turbo3)" | awk -v s=$s '{print "splits" s, $1, $4, $5}'
      done | tee "$OUT/splits.txt" ;;
    ab)  # A/B of builds: every $AB_DIR/turboprof-<label> profiles the same points (AB_ARGS, modes
         # AB_MODES), in alternating rounds (AB_ROUNDS) so that drift falls on every build alike; ab.txt lines:
         # round label type variant mode context us; then the median per build, side by side
      bins=("$AB_DIR"/turboprof-*)
      nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv -lms 500 > "$OUT/ab-smi.csv" 2>&1 &
      smi=$!
      for round in $(seq 1 "${AB_ROUNDS:-2}"); do
        for bin in "${bins[@]}"; do
          label=${bin##*/turboprof-}
          "$bin" profile --workload llama8b --modes "${AB_MODES:-0}" --repeat 20 ${AB_ARGS:---ctx 1k,8k,32k,128k} 2>&1 \
            | grep -E "^(f16|q8_0|turbo)" | awk -v r="$round" -v l="$label" '{print r, l, $1, $2, $3, $4, $5}'
        done
      done | tee "$OUT/ab.txt"
      kill $smi
      echo "SM clock samples:"; awk -F, 'NR>1{print $2}' "$OUT/ab-smi.csv" | sort | uniq -c | sort -rn | head -4
      # Per (type, mode, context): the median over rounds of each build, side by side.
      python3 bench/ab_summary.py "$OUT/ab.txt"
      ;;
    inspect)
      I=/tmp/inspect; rm -rf $I; mkdir -p $I
      (command -v nvdisasm; nvdisasm --version) > $I/tools.txt 2>&1
      TKV_PIPELINE_STATS=1 TKV_PIPELINE_IR=$I/ir TKV_LOG=debug TKV_CACHE_DIR=$I/cache $B/profile/turboprof profile \
        --workload llama8b --ctx 32k,128k --types ${INSPECT_TYPES:-turbo3,f16} --variants ${INSPECT_VARIANTS:-smem,tc} \
        --modes 0,1 --repeat 20 > $I/run.txt 2>&1
      grep -E "built pipeline|^(f16|turbo)" $I/run.txt | cut -c1-400 | sort | uniq | head -40
      # (the driver returns no internal representations, and ncu sees no Vulkan dispatches: the
      # SASS comes from the pipeline cache)
      python3 bench/sass_dump.py $I/sass $I/cache 2>&1 | cut -c1-220 | tee $I/sass-index.txt
      # the tc kernels' tile loops: length and instruction mix per 16-token tile
      for f in $I/sass/*.sass; do grep -q HMMA "$f" && echo "$f: $(python3 bench/sass_loop.py "$f" | tr '\n' ' ')"; done \
        | cut -c1-400 | tee $I/loops.txt
      tar czf "$OUT/inspect.tar.gz" -C /tmp inspect ;;
    timeline)  # each workgroup's phases from the device clock (turboprof timeline)
      mkdir -p "$OUT/timeline"
      $B/tests/test_timeline --gtest_brief=1 2>&1 | tail -4 | tee "$OUT/timeline/tests.txt"
      $B/profile/turboprof timeline --workload llama8b --ctx ${TIMELINE_CTX:-1k,4k,8k,32k,128k} \
        --types ${TIMELINE_TYPES:-all} --repeat 20 --out "$OUT/timeline" > "$OUT/timeline/table.txt" 2>&1
      cat "$OUT/timeline/table.txt" ;;
    khr)  # the tc kernel's matrices as KHR ones (default) against NV ones (TKV_COOPMAT_KHR=0): which
          # one the context chose, the tc and fused-append suites under NV, then modes 0 and 1 both ways
      mkdir -p "$OUT/khr"
      (TKV_COOPMAT_KHR=0 TKV_LOG=debug $B/tests/test_decode_tc 2>&1 | grep -E "tc matrices|tc decode|^tc |PASSED|FAILED|SKIPPED"
       TKV_COOPMAT_KHR=0 $B/tests/test_append_decode --gtest_brief=1 2>&1 | tail -3) | tee "$OUT/khr/tests.txt"
      for round in 1 2; do
        for k in 0 1; do
          TKV_COOPMAT_KHR=$k $B/profile/turboprof profile --workload llama8b --ctx 8k,32k,128k \
            --types turbo2,turbo3,turbo4 --modes 0,1 --repeat 20 2>&1 | grep -E "^turbo" | awk -v r=$round -v k=$k \
            '{print "round" r, (k ? "khr" : "nv"), $1, $2, $3, $4, $5}'
        done
      done | tee "$OUT/khr/times.txt" ;;
    targets)  # the P1-P8 table of performance.md; everything it measured packed in targets.tar.gz
      TKV_BUILD=$B OUT=$OUT bash bench/run_targets.sh ;;
    *) echo "unknown step $step" ;;
  esac
done
