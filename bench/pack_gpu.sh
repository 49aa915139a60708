#!/usr/bin/env bash
# Builds what a session's GPU scripts run (the checked-out tree, Release, static: the GPU machine
# has none of our Debian libraries), stripped into build-slim/ and packed as .pk/bins.tar.xz
# (carry [".gl", ".pk"]; bench/gpu_prelude.sh unpacks it there).
set -euo pipefail
cmake -S . -B build-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null
cmake --build build-run -j2 --target turboprof test_decode_tc test_append_decode test_decode bench_append
rm -rf build-slim && mkdir -p build-slim/profile build-slim/tests build-slim/bench .pk
strip -o build-slim/profile/turboprof build-run/profile/turboprof
for t in test_decode_tc test_append_decode test_decode; do strip -o build-slim/tests/$t build-run/tests/$t; done
strip -o build-slim/bench/bench_append build-run/bench/bench_append
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
ls -la .pk/bins.tar.xz
