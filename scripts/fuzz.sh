#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan into build-fuzz/ (or
# $TKV_FUZZ_BUILD_DIR) and runs each for SECONDS seconds (default 600), two at a time (the
# machine has 2 cores), each on a copy of its committed seed corpus. Crashes and new inputs go
# to build-fuzz/runs/<target>/; a crash makes the script exit non-zero.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. bash scripts/fuzz.sh 60 fuzz_policy
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_cache_file fuzz_import_rows fuzz_policy)
dir=${TKV_FUZZ_BUILD_DIR:-build-fuzz}

bash scripts/setup.sh
# clang 16 and its runtime (libFuzzer, sanitizers): only this script needs them. Not Debian's
# default clang 14: it cannot capture structured bindings in lambdas (C++20), which the library
# does (attention/policy.cpp).
for p in clang-16 libclang-rt-16-dev; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev >/dev/null
    break
  fi
done
# A build dir configured with another compiler cannot switch: start it again.
if [ -f "$dir/CMakeCache.txt" ] && ! grep -q "CMAKE_CXX_COMPILER:.*clang++-16" "$dir/CMakeCache.txt"; then
  rm -rf "$dir"
fi

CXX=clang++-16 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTKV_BUILD_FUZZERS=ON \
  -DTKV_BUILD_TESTS=OFF -DTKV_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" --parallel 2 --target "${targets[@]}"

# Lavapipe keeps a little memory until exit that LeakSanitizer would report as leaks; the
# policy target runs without Vulkan and keeps leak detection.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Symbolized stacks in crash reports (clang 16 ships no llvm-symbolizer of its own here).
if sym=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer); then export ASAN_SYMBOLIZER_PATH=$sym; fi
export TKV_CACHE_DIR=${TKV_CACHE_DIR:-$PWD/$dir/pipeline-cache}
run_one() {
  local t=$1 out=$dir/runs/$1 leaks=0 extra=()
  mkdir -p "$out/corpus" "$out/artifacts"
  cp -n tests/fuzz/corpus/"$t"/* "$out/corpus/" 2>/dev/null || true
  [ "$t" = fuzz_policy ] && leaks=1 && extra=(-dict=tests/fuzz/policy.dict)
  local start=$SECONDS
  local rc=0
  ASAN_OPTIONS=detect_leaks=$leaks "$dir/tests/fuzz/$t" "$out/corpus" -max_total_time="$seconds" -rss_limit_mb=4096 \
    -max_len=16384 -artifact_prefix="$out/artifacts/" -print_final_stats=1 "${extra[@]}" >"$out/log.txt" 2>&1 || rc=$?
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log.txt" | grep -o '[0-9]*$' || echo "?")
  echo "$t: exit $rc, $((SECONDS - start)) s, $execs executions, corpus $(ls "$out/corpus" | wc -l) files, log $out/log.txt"
  return $rc
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} == 2)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
