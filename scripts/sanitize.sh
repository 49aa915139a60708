#!/usr/bin/env bash
# Builds the `asan` preset (Debug with AddressSanitizer, UndefinedBehaviorSanitizer and
# LeakSanitizer) into build-asan/ and runs the quick suite under it. Any sanitizer report fails
# the run. Extra arguments go to ctest (e.g. `-R Cache`, or `-L soak` for another label). CI runs
# the whole quick suite. On 2 cores with lavapipe its tests took 8.7 min after the test command
# had filled the pipeline cache it shares (below; CI in a fresh clone, 2026-12-02: 24 min plain,
# the whole CI 41.5 min), and 35 min by themselves with a cache of their own that was cold
# (2026-11-29: every pipeline compiled again), plus the builds.
#
# The Khronos validation layer is off here (scripts/test.sh runs the suite under it): it cannot
# be preloaded (it exports vkGetDeviceProcAddr and vkGetInstanceProcAddr, which would interpose
# the loader's), so the loader unloads it at vkDestroyInstance and LeakSanitizer would report the
# memory it keeps as leaked from "<unknown module>", which no suppression can name.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh
cmake --preset asan >/dev/null
cmake --build build-asan --parallel "$(nproc)"

# LD_PRELOAD, for the test processes (and the ctest that starts them):
#  - the ASan runtime first: it must come before any library that is not instrumented;
#  - the Vulkan drivers (every ICD manifest's library; they export only vk_icd* entry points),
#    so that they stay mapped until exit. The loader unloads them at vkDestroyInstance;
#    LeakSanitizer would then report memory they keep in their own globals (lavapipe: 128-256
#    bytes) as leaked from "<unknown module>". Kept mapped, that memory is still reachable, and
#    what a driver really leaks names it and meets tests/lsan.supp.
preload="$(g++ -print-file-name=libasan.so)"
for manifest in /usr/share/vulkan/icd.d/*.json; do
  [ -e "$manifest" ] || continue
  lib=$(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$manifest")
  if [ -f "$lib" ]; then preload="$preload $lib"; fi
done

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export TKV_VALIDATION=0
# Pipelines. After the test command (CI runs it first), its cache (~/.cache/turbokv, as the
# library picks it) holds every host-specialized module of the quick suite (spirv/) and the
# driver's pipelines built from them; the shaders' SPIR-V is the same in both builds (glslc -O,
# whatever the build type), so this run shares that cache and finds them there. Without it (a
# standalone run, or the caller set either variable) the decoder leaves specialization to the
# driver here instead: SPIRV-Tools' optimizer, linked into the instrumented Debug library, runs
# ~6x slower under it (a decode test 51 s -> 286 s), and the pipelines get a cache of their own,
# in build-asan/. The host path is exercised either way: tests/test_vk_runtime.cpp specializes
# small shaders through it directly. (After a shader change, run the test command first, as CI
# does: modules missing from spirv/ are specialized here, under the sanitizers, ~6x slower.)
shared_cache="${XDG_CACHE_HOME:-${HOME:-}/.cache}/turbokv"
if [ -z "${TKV_SPECIALIZE+set}${TKV_CACHE_DIR+set}" ] && [ -d "$shared_cache/spirv" ]; then
  echo "sanitize: sharing the pipeline cache $shared_cache (host specialization from its spirv/)"
else
  export TKV_SPECIALIZE="${TKV_SPECIALIZE:-0}"
  export TKV_CACHE_DIR="${TKV_CACHE_DIR:-$root/build-asan/pipeline-cache}"
fi
# api_install_consumer is left out: it checks packaging (install, find_package, pkg-config) by
# running compilers and CMake, which would run under the preloaded ASan runtime and report the
# compilers' own leaks; the test command runs it.
if [ "$#" -eq 0 ]; then set -- -L quick -E '^api_install_consumer$'; fi
LD_PRELOAD="$preload" ctest --test-dir build-asan --output-on-failure -j "$(nproc)" "$@"
