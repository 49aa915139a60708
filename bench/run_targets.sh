#!/usr/bin/env bash
# Everything the P1-P8 table of performance.md needs, in one run on the GPU machine, given a built
# tree ($TKV_BUILD, default build) and a working Vulkan loader (bench/gpu_session.sh sets it up:
# `bash bench/gpu_session.sh targets`). Steps, each logged and bounded by a timeout:
#   1. correctness: test_decode's LargeContexts (exactness at 32K and 128K, m 1 and 8)
#   2. turboprof sweep, llama8b, 1K..128K, every type (P1, P3, P4, P5)
#   3. turboprof profile, modes 0 and 1 at 8K, 32K, 128K (P2)
#   4. turboprof profile, m = 8, 2 and 3 at 32K (P6)
#   5. turboprof profile, batch 16 (ragged) at 8K (P8)
#   6. bench_append: one token appended to all 32 layers against the decode step at 4K (P7)
#   7. bench/peer_pytorch.py: PyTorch SDPA flash and cuDNN, batch 1 and 16, 2K..128K (P4)
#   8. bench/targets.py: the table, printed last (P3c against llama.cpp's figures as documented in
#      performance.md: bench/testdata/peers/llamacpp_vulkan_h200.json)
# Output under $OUT (at most 8 files come back from the device machine; this writes 3):
#   targets.txt      the table (short, then a line per type / depth, then Markdown for bench/results/)
#   targets-log.txt  every step's output
#   targets.tar.gz   every JSON input (sweep.json, profile-*.json, append.json, peer.json,
#                    devices.json), the sweep's CSV/SVG, targets.json (the results) and the log
# Environment: TKV_BUILD, OUT, TKV_TARGETS_REPEAT (turboprof repeats, 20), TKV_TARGETS_PEER_REPEAT
# (50), TKV_TARGETS_STEP_TIMEOUT (seconds per step, 300), TKV_TARGETS_QUICK=1 (tiny sizes and two
# types, for a CPU Vulkan device: checks the script, measures nothing of the targets),
# TKV_TARGETS_SKIP (steps to skip, e.g. "peer,tests"), TKV_TARGETS_BUDGET (seconds for the whole
# run, 0: none: each step's timeout is cut to what is left, 15 s kept for the table, and steps that
# would get less than 10 s are skipped, so that a run inside an outer time limit still prints the
# table of what it measured).
# shellcheck disable=SC2054  # commas inside option values, not array separators
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${TKV_BUILD:-build}
OUT=${OUT:-/tmp/out}
REPEAT=${TKV_TARGETS_REPEAT:-20}
PEER_REPEAT=${TKV_TARGETS_PEER_REPEAT:-50}
STEP_TIMEOUT=${TKV_TARGETS_STEP_TIMEOUT:-300}
SKIP=",${TKV_TARGETS_SKIP:-},"
BUDGET=${TKV_TARGETS_BUDGET:-0}
mkdir -p "$OUT"
W=$(mktemp -d "${TMPDIR:-/tmp}/tkv-targets.XXXXXX")
LOG=$W/log.txt
P=$B/profile/turboprof
: >"$LOG"

if [[ "${TKV_TARGETS_QUICK:-0}" == 1 ]]; then
  SWEEP_CTX=1k,2k; MODES_CTX=1k; M_CTX=1k; B16_CTX=1k; BATCH=2; TYPES=(--types turbo3,q8_0)
  PEER_ARGS=(--ctx 1k --batch 1 --repeat 5); APPEND_ENV=(TKV_BENCH_TYPES=turbo3,q8_0); LARGE=()
  REPEAT=${TKV_TARGETS_REPEAT:-3}
else
  SWEEP_CTX=1k..128k; MODES_CTX=8k,32k,128k; M_CTX=32k; B16_CTX=8k; BATCH=16; TYPES=()
  PEER_ARGS=(--ctx 2k,8k,32k,128k --batch 1,16 --repeat "$PEER_REPEAT"); APPEND_ENV=(); LARGE=(TKV_LARGE_CONTEXTS=1)
fi

STATUS=()
# step NAME TIMEOUT_S COMMAND...: runs COMMAND with its output appended to the log; records the result.
step() {
  local name=$1 limit=$2
  shift 2
  if [[ "$SKIP" == *",$name,"* ]]; then
    STATUS+=("$name: skipped (TKV_TARGETS_SKIP)")
    return 0
  fi
  if ((BUDGET > 0)); then
    local left=$((BUDGET - SECONDS - 15))
    if ((left < 10)); then
      STATUS+=("$name: skipped (TKV_TARGETS_BUDGET: ${BUDGET} s spent)")
      return 0
    fi
    ((left < limit)) && limit=$left
  fi
  local t0=$SECONDS rc
  echo "=== $name: $*" >>"$LOG"
  echo "[$(date +%T)] $name ..." >&2
  timeout "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  local msg="$name: rc $rc, $((SECONDS - t0)) s"
  ((rc == 124)) && msg+=" (timed out after ${limit} s)"
  echo "=== $msg" >>"$LOG"
  STATUS+=("$msg")
  return $rc
}
# jstep NAME FILE COMMAND...: like step, with COMMAND's stdout (a JSON document) going to FILE.
jstep() {
  local name=$1 file=$2
  shift 2
  # shellcheck disable=SC2016  # expanded by the inner bash
  step "$name" "$STEP_TIMEOUT" bash -c '"$@" >"$0"' "$file" "$@"
  local rc=$?
  # A failed run leaves no half document behind for targets.py to misread.
  if ((rc != 0)) || ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$file" 2>/dev/null; then
    rm -f "$file"
  fi
  return $rc
}

for exe in "$P" "$B/tests/test_decode" "$B/bench/bench_append"; do
  [[ -x "$exe" ]] || echo "run_targets: $exe is missing (build the tree first)" | tee -a "$LOG" >&2
done
(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null
 "$P" devices 2>&1 | head -20) >>"$LOG"
"$P" devices --json >"$W/devices.json" 2>>"$LOG" || rm -f "$W/devices.json"

# 1. Correctness first: a wrong kernel's speed means nothing.
CORRECT="passed"
if ! step tests "$STEP_TIMEOUT" env "${LARGE[@]}" "$B/tests/test_decode" --gtest_filter='*LargeContexts*' --gtest_brief=1; then
  CORRECT="FAILED (see targets-log.txt)"
fi
[[ "${STATUS[-1]}" == "tests: skipped"* ]] && CORRECT="not checked"  # (TKV_TARGETS_SKIP or the budget)
[[ ${#LARGE[@]} -eq 0 && "$CORRECT" == passed ]] && CORRECT="not checked (quick mode: LargeContexts skip)"

# 2-5. turboprof: the sweep (with its CSV/SVG under sweep/), then the profile runs.
jstep sweep "$W/sweep.json" "$P" sweep --workload llama8b --ctx "$SWEEP_CTX" "${TYPES[@]}" --repeat "$REPEAT" \
  --json --out "$W/sweep"
jstep modes01 "$W/profile-modes01.json" "$P" profile --workload llama8b --ctx "$MODES_CTX" "${TYPES[@]}" \
  --modes 0,1 --repeat "$REPEAT" --json
for m in 8 2 3; do
  jstep "m$m" "$W/profile-m$m.json" "$P" profile --workload llama8b --ctx "$M_CTX" "${TYPES[@]}" --m "$m" \
    --modes 0 --repeat "$REPEAT" --json
done
jstep "batch$BATCH" "$W/profile-b$BATCH.json" "$P" profile --workload llama8b --ctx "$B16_CTX" "${TYPES[@]}" \
  --batch "$BATCH" --modes 0 --repeat "$REPEAT" --json

# 6. Append against the decode step at 4K (Google Benchmark's JSON to a file, its table to the log).
step append "$STEP_TIMEOUT" env "${APPEND_ENV[@]}" "$B/bench/bench_append" --benchmark_out="$W/append.json" \
  --benchmark_out_format=json || rm -f "$W/append.json"

# 7. The PyTorch peer (python3 on the GPU machine holds torch).
step peer "$STEP_TIMEOUT" env PYTHONUNBUFFERED=1 python3 bench/peer_pytorch.py "${PEER_ARGS[@]}" --out "$W/peer.json" \
  || rm -f "$W/peer.json"

# 8. The table.
INPUTS=()
for f in sweep.json profile-modes01.json profile-m8.json profile-m2.json profile-m3.json "profile-b$BATCH.json" \
  append.json peer.json; do
  [[ -s "$W/$f" ]] && INPUTS+=("$W/$f")
done
# llama.cpp's Vulkan figures (P3c) as performance.md documents them: the GPU machine has no
# llama.cpp to run; the table says the figure is documented, not this run's.
[[ "${TKV_TARGETS_QUICK:-0}" == 1 ]] || INPUTS+=(bench/testdata/peers/llamacpp_vulkan_h200.json)
# table ARGS...: targets.py over the inputs, or one line where no step measured anything (all
# skipped, failed or out of budget).
table() {
  if ((${#INPUTS[@]})); then python3 bench/targets.py "$@" "${INPUTS[@]}"; else echo "no step measured anything: no table"; fi
}
{
  # (the commit: the one bench/pack_gpu.sh packed, or this checkout's)
  commit=$(cat "$B/COMMIT" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
  echo "P1-P8 targets, $(date -u +%Y-%m-%dT%H:%MZ), build $B, commit $commit"
  echo "correctness (test_decode LargeContexts): $CORRECT"
  printf '  %s\n' "${STATUS[@]}"
  echo
  table --detail --json "$W/targets.json"
  echo
  table --markdown
} >"$W/table.txt" 2>&1
cp "$W/table.txt" "$OUT/targets.txt"
cp "$LOG" "$OUT/targets-log.txt"
tar -czf "$OUT/targets.tar.gz" -C "$W" --exclude=table.txt . 2>>"$OUT/targets-log.txt"

echo
echo "steps:"
printf '  %s\n' "${STATUS[@]}"
echo "correctness (test_decode LargeContexts): $CORRECT"
echo "files: $OUT/targets.txt, $OUT/targets-log.txt, $OUT/targets.tar.gz"
echo
table
rm -rf "$W"
