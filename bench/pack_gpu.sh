#!/usr/bin/env bash
# Builds what a session's GPU scripts run (the checked-out tree, Release, our library static; the
# GPU machine has none of our Debian libraries: spdlog, fmt and Google Benchmark travel in .gl/lib,
# which it fills last through bench/gl_setup.sh), stripped into build-slim/ and packed as
# .pk/bins.tar.xz (carry [".gl", ".pk"]; bench/gpu_prelude.sh unpacks it there).
# Arguments, for A/B runs in one call: LABEL=COMMIT:TARGET[,TARGET...] builds those targets
# (turboprof, bench_append, test_*) at COMMIT too, packed beside the tree's as <target>-<LABEL>.
# Those are built first, in the same build folder checked out per commit (incremental; the tree
# must be clean), then the starting branch is checked out again.
set -euo pipefail
build() { cmake -S . -B build-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null && cmake --build build-run -j2 --target "$@"; }
where() { case $1 in turboprof) echo profile ;; bench_*) echo bench ;; *) echo tests ;; esac; }
X=$(mktemp -d)
if (($#)); then
  git diff --quiet && git diff --cached --quiet || { echo "commit or stash first" >&2; exit 1; }
  start=$(git rev-parse --abbrev-ref HEAD)
  for spec in "$@"; do
    label=${spec%%=*} rest=${spec#*=}
    git checkout -q "${rest%%:*}"
    IFS=, read -ra targets <<<"${rest#*:}"
    build "${targets[@]}" >/dev/null
    for t in "${targets[@]}"; do strip -o "$X/$t-$label" "build-run/$(where "$t")/$t"; done
  done
  git checkout -q "$start"
fi
tree=(turboprof test_decode_tc test_append_decode test_decode bench_append bench_decode)
build "${tree[@]}"
rm -rf build-slim && mkdir -p build-slim/profile build-slim/tests build-slim/bench .pk
for t in "${tree[@]}"; do strip -o "build-slim/$(where "$t")/$t" "build-run/$(where "$t")/$t"; done
for f in "$X"/*; do [ -e "$f" ] && cp "$f" "build-slim/$(where "$(basename "${f%-*}")")/"; done
rm -rf "$X"
git describe --always --dirty > build-slim/COMMIT  # (the tree's commit, for run_targets.sh's header)
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
# .gl/ with the libraries these binaries link (a fresh checkout's first pack had none: session 49).
bash bench/gl_setup.sh >/dev/null
ls -la .pk/bins.tar.xz .gl/lib
