#!/usr/bin/env bash
# Builds the `asan` preset (Debug with AddressSanitizer, UndefinedBehaviorSanitizer and
# LeakSanitizer) into build-asan/ and runs the quick suite under it, with the Khronos validation
# layer on as in scripts/test.sh. Any sanitizer report fails the run. Extra arguments go to ctest
# (e.g. `-R Cache`, or `-L soak` for another label). The whole quick suite takes about 2.5 min
# on 2 cores with lavapipe (plus the build), so CI runs all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh
cmake --preset asan >/dev/null
cmake --build build-asan --parallel "$(nproc)"

# LD_PRELOAD, for the test processes (and the ctest that starts them):
#  - the ASan runtime first: it must come before any library that is not instrumented;
#  - the Vulkan drivers (every ICD manifest's library) and the validation layer, so that they stay
#    mapped until exit. The loader unloads them at vkDestroyInstance; LeakSanitizer would then
#    report memory they keep in their own globals (lavapipe: 128-256 bytes) as leaked from
#    "<unknown module>", a stack no suppression can name. Kept mapped, such memory is reachable,
#    and what they really leak names them and meets tests/lsan.supp.
preload="$(g++ -print-file-name=libasan.so)"
for manifest in /usr/share/vulkan/icd.d/*.json; do
  [ -e "$manifest" ] || continue
  lib=$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$manifest")
  [ -f "$lib" ] && preload="$preload $lib"
done
layer=$(ldconfig -p | sed -n 's/.*libVkLayer_khronos_validation.so .*=> \(.*\)/\1/p' | head -n 1)
[ -n "$layer" ] && preload="$preload $layer"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export TKV_VALIDATION="${TKV_VALIDATION:-1}"
# A pipeline cache of its own: the asan build must not share compiled pipelines with build/.
export TKV_CACHE_DIR="${TKV_CACHE_DIR:-$root/build-asan/pipeline-cache}"
if [ "$#" -eq 0 ]; then set -- -L quick; fi
LD_PRELOAD="$preload" ctest --test-dir build-asan --output-on-failure -j "$(nproc)" "$@"
