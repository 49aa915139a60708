#!/usr/bin/env bash
# Builds what next-rows16.sh carries, on the CI machine, from the repository root with branch
# tc-rows16 checked out: the branch in build-run and main's turboprof in a worktree (/tmp/tkv-main),
# both Release and static (-DTKV_SHARED=OFF: the GPU machine has none of our Debian libraries),
# stripped into build-slim/ and packed as .pk/bins.tar.xz (carry [".gl", ".pk"]).
set -euo pipefail
cmake -S . -B build-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null
cmake --build build-run -j2 --target turboprof test_decode_tc test_append_decode test_decode
git worktree remove --force /tmp/tkv-main 2>/dev/null || true
git worktree add -f /tmp/tkv-main main >/dev/null
cmake -S /tmp/tkv-main -B /tmp/tkv-main/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null
cmake --build /tmp/tkv-main/build -j2 --target turboprof
rm -rf build-slim && mkdir -p build-slim/profile build-slim/tests .pk
strip -o build-slim/profile/turboprof build-run/profile/turboprof
strip -o build-slim/profile/turboprof_base /tmp/tkv-main/build/profile/turboprof
for t in test_decode_tc test_append_decode test_decode; do strip -o build-slim/tests/$t build-run/tests/$t; done
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
git worktree remove --force /tmp/tkv-main  # (main stays free to check out here)
ls -la .pk/bins.tar.xz
