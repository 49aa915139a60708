#!/usr/bin/env bash
# Installs the built turbokv into a temporary prefix, then builds and runs the consumers in this
# folder against it: through find_package(turbokv) (CMake) and through pkg-config (turbokv.pc),
# in C and in C++17. Usage: run.sh BUILD_DIR WORK_DIR. Exits non-zero on the first failure.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

echo "== cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

echo "== find_package(turbokv)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here" -B "$work/cmake" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer_c" "$work/c.tkv"
"$work/cmake/consumer_cpp" "$work/cpp.tkv"

echo "== pkg-config turbokv"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ -d "$prefix/lib/pkgconfig" ] || export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name turbokv.pc | head -1)")
libdir=$(pkg-config --variable=libdir turbokv)
cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$here/consumer.c" $(pkg-config --cflags --libs turbokv) -lm \
  -Wl,-rpath,"$libdir" -o "$work/pc_consumer_c"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror "$here/consumer.cpp" $(pkg-config --cflags --libs turbokv) \
  -Wl,-rpath,"$libdir" -o "$work/pc_consumer_cpp"
"$work/pc_consumer_c" "$work/pc_c.tkv"
"$work/pc_consumer_cpp" "$work/pc_cpp.tkv"
echo "== consumers passed"
