#!/usr/bin/env bash
# pack.sh for the checked-out tree, plus turboprof and bench_append built at each commit named
# (build-slim/profile/turboprof-<commit>, build-slim/bench/bench_append-<commit>), for A/B/C runs
# in one GPU call. Builds incrementally in build-run (a checkout per commit), then returns to the
# branch it started on. The tree must be clean.
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
start=$(git rev-parse --abbrev-ref HEAD)
git diff --quiet && git diff --cached --quiet || { echo "commit or stash first" >&2; exit 1; }
mkdir -p /tmp/pack-commits
for c in "$@"; do
  git checkout -q "$c"
  cmake -S . -B build-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null
  cmake --build build-run -j2 --target turboprof bench_append >/dev/null
  strip -o /tmp/pack-commits/turboprof-$c build-run/profile/turboprof
  strip -o /tmp/pack-commits/bench_append-$c build-run/bench/bench_append
done
git checkout -q "$start"
bash "$D/pack.sh" >/dev/null
for c in "$@"; do
  cp /tmp/pack-commits/turboprof-$c build-slim/profile/
  cp /tmp/pack-commits/bench_append-$c build-slim/bench/
done
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
ls -la .pk/bins.tar.xz
