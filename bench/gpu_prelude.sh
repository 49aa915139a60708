# Sourced first by a session's GPU script on the device machine (carry [".gl", ".pk"] from
# bench/pack_gpu.sh): unpacks the binaries into build-slim/, sets up the carried Vulkan loader
# (gpu_env.sh), and gives R ($OUT), P (turboprof), lg (a line, with the seconds since the start,
# into $R/progress.txt) and the A/B helpers below.
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS; P=build-slim/profile/turboprof
stamp() { echo "[$((SECONDS-T0))s] $*"; }  # a progress line: the seconds since the start, then the text
lg() { stamp "$@" >> "$R/progress.txt"; }
# tst LABEL LIMIT COMMAND...: a test binary's output appended to $R/tests.txt under a header; its
# rc and verdict lines to progress.txt. (Two may run side by side, with different labels: each
# section is written whole, by one append, so that they do not interleave.)
tst() {
  local l=$1 lim=$2 rc; shift 2
  { echo "===== $l: $*"; timeout "$lim" "$@" 2>&1; } > "$R/.tst-$l.txt"; rc=$?
  cat "$R/.tst-$l.txt" >> "$R/tests.txt"
  { stamp "$l rc $rc"; grep -E "FAILED|Failure|PASSED|large:" "$R/.tst-$l.txt" | head -20; } > "$R/.tst-$l.log"
  cat "$R/.tst-$l.log" >> "$R/progress.txt"; rm -f "$R/.tst-$l.txt" "$R/.tst-$l.log"
}
# passed LABEL: true when tst's section LABEL of tests.txt passed and holds no failure (A/B
# scripts time only the labels whose build passed its test).
passed() {
  local out
  out=$(awk -v h="===== $1:" 'index($0, h) == 1 {on = 1; next} /^=====/ {on = 0} on' "$R/tests.txt")
  echo "$out" | grep -q "PASSED" && ! echo "$out" | grep -q "FAILED"
}
# suites LIMIT LABEL: build LABEL's tc and fused-append suites (test_decode_tc, test_append_decode;
# main: the tree's, else TEST-LABEL from pack_gpu.sh's arguments) side by side, LIMIT seconds
# each, as tst labels tc-LABEL and app-LABEL (main: tc and app); then a progress line.
suites() {
  local lim=$1 l=$2 sfx=-$2 p=
  [ "$l" = main ] && sfx= || p=-$l
  tst "tc$p" "$lim" "build-slim/tests/test_decode_tc$sfx" &
  tst "app$p" "$lim" "build-slim/tests/test_append_decode$sfx" &
  wait
  lg tests
}
# tested TEST LIMIT LABEL...: each LABEL's build of tests/TEST (TEST-LABEL, from pack_gpu.sh's
# arguments) run side by side (tst labels TEST-LABEL), LIMIT seconds each; then LABELS is main and
# the labels whose test passed, the ones an A/B script times.
tested() {
  local t=$1 lim=$2 l; shift 2
  for l in "$@"; do tst "$t-$l" "$lim" "build-slim/tests/$t-$l" & done
  wait
  LABELS=main
  for l in "$@"; do passed "$t-$l" && LABELS="$LABELS $l"; done
  lg "timed: $LABELS"
}
# labeled FILE PREFIX LABEL LIMIT PATTERN BIN ARGS...: BIN ARGS of build LABEL (main: the tree's;
# else BIN-LABEL, from pack_gpu.sh's arguments) with its own pipeline cache, LIMIT seconds at most;
# its output lines matching PATTERN, each after PREFIX, appended to $R/FILE. (Settings such as
# TKV_SUBGROUPS: export them.)
labeled() {
  local f=$1 pre=$2 l=$3 lim=$4 pat=$5 b=$6; shift 6
  [ "$l" = main ] || b=$b-$l
  TKV_CACHE_DIR=/tmp/tkv-$l timeout "$lim" "$b" "$@" 2>&1 | grep -E "$pat" | sed "s/^/$pre /" >> "$R/$f"
}
# rows FILE PREFIX LABEL ARGS...: turboprof ARGS, 60 s; its table rows and headers.
rows() { labeled "$1" "$2" "$3" 60 "^(turbo|q8_0|f16|type)|rror" "$P" "${@:4}"; }
# forced FILE ROUND "ARGS" "VAR=VALUE LABEL"...: main's turboprof ARGS as planned (rows prefixed
# "ROUND plan"), then under each forced setting ("ROUND LABEL"), into FILE (session 52 run 4's
# sweep of the plan's choices; ab_summary.py reads the labels as columns).
forced() {
  local f=$1 rep=$2 a=$3 v; shift 3
  rows "$f" "$rep plan" main $a
  for v in "$@"; do (export "${v% *}"; rows "$f" "$rep ${v#* }" main $a); done
}
# tl FILE PREFIX LABEL ARGS...: turboprof timeline ARGS, 30 s; its table rows and headers.
tl() { labeled "$1" "$2" "$3" 30 "^(turbo|q8_0|f16|type|shape)|rror" "$P" timeline "${@:4}"; }
# app FILE PREFIX LABEL FILTER: bench_append on the benchmarks matching FILTER, 90 s; its fused rows.
app() { labeled "$1" "$2" "$3" 90 "fused|rror" build-slim/bench/bench_append --benchmark_filter="$4"; }
# apps REPS TYPES LABEL...: bench_append's fused llama8b rows of TYPES (comma list), each LABEL in
# turn, REPS rounds (the A/B rows move ~1-2 points between repetitions), into append.txt.
apps() {
  local reps=$1 types=$2; shift 2
  for rep in $(seq "$reps"); do
    for l in "$@"; do TKV_BENCH_TYPES=$types app append.txt "$rep $l 4k" "$l" fused/llama8b; done
  done
  lg "bench"
}
# tls TYPES CTX LABEL...: each LABEL's fused timeline of TYPES at CTX (medians of 20), into tl.txt.
tls() {
  local types=$1 ctx=$2; shift 2
  for l in "$@"; do tl tl.txt "$l" "$l" --fused --types "$types" --ctx "$ctx" --repeat 20; done
  lg "timelines"
}
# fused_ab REPS LABEL...: a fused-append A/B: the tree's tc tests (both binaries side by side),
# then each LABEL's fused timelines (turbo2-4 at 4097 tokens, turbo2-3 at 4150) and REPS rounds of
# bench_append's turbo rows; the progress, bench_append's summary and the timelines printed.
fused_ab() {
  local reps=$1; shift
  suites 240 main
  tls turbo2,turbo3,turbo4 4097 "$@"
  tls turbo2,turbo3 4150 "$@"
  apps "$reps" turbo2,turbo3,turbo4 "$@"
  cat "$R/progress.txt" "$R/device.txt"
  append_summary
  cut -c1-250 "$R/tl.txt"
}
# sass NAME LABEL ARGS...: the machine code of the pipelines that turboprof ARGS of build LABEL
# builds (own empty pipeline cache; bench/sass_dump.py), as one archive $R/sass-NAME.tar.gz (the
# .sass files; one file, since only a few files come back from a call) and its index
# $R/sass-NAME.txt (instructions and opcode counts per pipeline). SASS_BIN=BIN runs BIN instead
# of turboprof (e.g. build-slim/bench/bench_append, whose fused rows build decode_tc_append).
sass() {
  local n=$1 l=$2 b=${SASS_BIN:-$P}; shift 2
  [ "$l" = main ] || b=$b-$l
  rm -rf "/tmp/sass-$n" "/tmp/sass-out-$n"
  TKV_CACHE_DIR=/tmp/sass-$n timeout 60 "$b" "$@" > /dev/null 2>&1
  python3 bench/sass_dump.py "/tmp/sass-out-$n" "/tmp/sass-$n" > "$R/sass-$n.txt" 2>&1
  (cd "/tmp/sass-out-$n" && tar czf "$R/sass-$n.tar.gz" ./*.sass 2>/dev/null)
}
# loops NAME LABEL ARGS...: sass NAME LABEL ARGS..., then for every pipeline with MMAs its
# highest register and its tile loop's instruction mix (bench/sass_loop.py, 60 s at most) into
# $R/loops.txt, and its listing as NAME-NN.sass into $R/listings.tar.gz (one file for every loops
# call: `sass_loop.py --list` reads them here afterwards); sass's own archive and index dropped
# (few files come back). Session 36's runs 2-3 wrote this out by hand.
loops() {
  local n=$1 f
  sass "$@"
  mkdir -p /tmp/listings
  for f in "/tmp/sass-out-$n"/*.sass; do
    grep -q HMMA "$f" || continue
    { echo "== $n $(basename "$f") registers R$(grep -o 'R[0-9]\+' "$f" | sed 's/R//' | sort -n | tail -1)";
      timeout 60 python3 bench/sass_loop.py "$f"; } >> "$R/loops.txt" 2>&1
    cp "$f" "/tmp/listings/$n-$(basename "$f")"
  done
  (cd /tmp && tar czf "$R/listings.tar.gz" listings)
  rm -f "$R/sass-$n.tar.gz" "$R/sass-$n.txt"
}
# rounds REPS "LABEL..." ARGS...: REPS rounds of turboprof ARGS for each LABEL in turn, into
# ab.txt, or AB_FILE (rows prefixed "ROUND LABEL"; bench/ab_summary.py reads them, keyed by type,
# mode and depth: give m, batch or other variants a file each), a progress line a round.
# (Sessions 37-40's A/B scripts wrote this loop out by hand; export settings before calling.)
rounds() {
  local reps=$1 labels=$2 f=${AB_FILE:-ab.txt} rep l; shift 2
  for rep in $(seq "$reps"); do
    for l in $labels; do rows "$f" "$rep $l" "$l" "$@"; done
    lg "$f $rep"
  done
}
# report [FILE...]: an A/B script's last lines: progress and device; for ab.txt (where there is
# one) and each FILE (other A/B files: batches, m) its errors and medians (bench/ab_summary.py);
# the loops' counts.
report() {
  cat "$R/progress.txt" "$R/device.txt"
  local f
  for f in ab.txt "$@"; do  # (each file's rows come back whole; here their medians, and errors)
    [ -f "$R/$f" ] || continue
    echo "== $f"
    grep -i rror "$R/$f" | head -5
    python3 bench/ab_summary.py "$R/$f"
  done
  [ -f "$R/loops.txt" ] && grep -E "^== |steady path:|issue floor" -A1 "$R/loops.txt" | cut -c1-250
  return 0
}
# probe_loops NAME "OPCODE..." ARGS...: sass NAME main ARGS... (turboprof issue's pipelines, which
# have no MMA), then each pipeline's loop around each OPCODE (bench/sass_loop.py --holds) into
# $R/loops.txt; the archive and index dropped.
probe_loops() {
  local n=$1 ops=$2 f h out; shift 2
  sass "$n" main "$@"
  for f in "/tmp/sass-out-$n"/*.sass; do
    for h in $ops; do
      out=$(python3 bench/sass_loop.py "$f" --holds "$h" 2>&1)
      echo "$out" | grep -q "^loop" && { echo "== $(basename "$f") holds $h"; echo "$out"; }
    done
  done >> "$R/loops.txt" 2>&1
  rm -f "$R/sass-$n.tar.gz" "$R/sass-$n.txt"
}
# append_summary: bench_append's fused rows in $R/append.txt as label, benchmark, decode step,
# fused step and ratio_pct (P7's measure).
append_summary() {
  awk '{r=""; f=""; d=""; for(i=1;i<=NF;i++){ if($i ~ /^ratio_pct=/) r=$i; if($i ~ /^fused_step_us=/) f=$i; if($i ~ /^decode_step_us=/) d=$i } print $1, $2, $3, $4, d, f, r}' "$R/append.txt"
}
# targets BUDGET: bench/run_targets.sh on build-slim (its tests step skipped: a script runs the
# tests it needs itself) within BUDGET seconds; the table as $R/targets.txt, its JSON inputs as
# $R/targets-inputs.tar.gz (run_targets.sh's own archive of them), its log as $R/targets-run.txt;
# the table printed. Give a whole table 400 s or more on an H200 (session 36: 306 s up to and with
# bench_append, then PyTorch's step, which a budget of 330 s skipped: P4 not measured).
targets() {
  TKV_TARGETS_SKIP=tests TKV_TARGETS_STEP_TIMEOUT=150 TKV_TARGETS_BUDGET=$1 TKV_BUILD=build-slim OUT=$R/t \
    timeout $(($1 + 12)) bash bench/run_targets.sh > "$R/targets-run.txt" 2>&1
  lg "targets rc $?"
  cp "$R/t/targets.txt" "$R/targets.txt" 2>/dev/null
  cp "$R/t/targets.tar.gz" "$R/targets-inputs.tar.gz" 2>/dev/null; rm -rf "$R/t"
  sed -n '/^target/,/targets met/p' "$R/targets.txt"
}
# bundle KEEP...: a call returns at most 8 files from $OUT (session 35's run 3 lost its targets.txt
# that way). If $R holds more, every file but progress.txt and those named KEEP goes into
# $R/more.tar.gz (unpack it here to read them). Call it last.
bundle() {
  [ "$(find "$R" -maxdepth 1 -type f | wc -l)" -le 8 ] && return
  local keep=" progress.txt $* " f rest=()
  for f in "$R"/*; do
    [ -f "$f" ] || continue
    case "$keep" in *" $(basename "$f") "*) ;; *) rest+=("$(basename "$f")") ;; esac
  done
  (cd "$R" && tar czf more.tar.gz "${rest[@]}" && rm -f "${rest[@]}")
}
