#!/usr/bin/env bash
# Session 23's pack: main's binaries (bench/pack_gpu.sh) plus, built at other commits and named
# <binary>-<label>: c1a6180 (before the plan counted the fused tail's shared memory): turboprof,
# bench_append; branch fused-tail-alias: turboprof, bench_append, test_append_decode; branch
# rows16-qrows8: turboprof, test_decode_tc. One build folder (build-run), checked out per commit
# (incremental), back to the starting branch at the end. The tree must be clean.
set -euo pipefail
start=$(git rev-parse --abbrev-ref HEAD)
git diff --quiet && git diff --cached --quiet || { echo "commit or stash first" >&2; exit 1; }
X=/tmp/pack23; rm -rf $X; mkdir -p $X
build_at() {  # build_at COMMIT LABEL TARGET...
  local c=$1 l=$2; shift 2
  git checkout -q "$c"
  cmake -S . -B build-run -G Ninja -DCMAKE_BUILD_TYPE=Release -DTKV_SHARED=OFF >/dev/null
  cmake --build build-run -j2 --target "$@" >/dev/null
  for t in "$@"; do
    local f; f=$(find build-run -name "$t" -type f -perm -u+x | head -1)
    strip -o $X/$t-$l "$f"
  done
}
build_at c1a6180 c1a6180 turboprof bench_append
build_at fused-tail-alias fused turboprof bench_append test_append_decode
build_at rows16-qrows8 qrows8 turboprof test_decode_tc
git checkout -q "$start"
bash bench/pack_gpu.sh >/dev/null
for f in $X/*; do
  case $(basename $f) in
    turboprof-*) cp $f build-slim/profile/ ;;
    bench_append-*) cp $f build-slim/bench/ ;;
    test_*) cp $f build-slim/tests/ ;;
  esac
done
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
ls -la .pk/bins.tar.xz build-slim/*/
