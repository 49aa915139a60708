#!/usr/bin/env bash
# Prepares .gl/ for the GPU machine (carry [".gl", ".pk"]): the Vulkan loader's Debian packages
# (the machine has none; bench/gpu_env.sh unpacks them there), the Debian shared libraries our
# binaries link (spdlog, fmt, Google Benchmark) in .gl/lib, and zstd (bench/sass_dump.py) in
# .gl/bin with its libraries. bench/pack_gpu.sh runs it after each pack (here, as root); .gl/ is
# kept out of git through .git/info/exclude. A checkout without .gl/lib fails on the device with
# "libspdlog.so.1.10: cannot open shared object file" (sessions 36, 49).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo /.gl/ >> .git/info/exclude
grep -qx '/.pk/' .git/info/exclude || echo /.pk/ >> .git/info/exclude
mkdir -p .gl/lib .gl/bin
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
  L=$(mktemp -d); mkdir -p "$L/partial"
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists="$L")
  apt-get "${o[@]}" update >/dev/null
  (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
# Every non-system library of the binaries pack_gpu.sh packed into build-slim/ and of zstd.
bins=(build-slim/*/* "$(command -v zstd)")
for b in "${bins[@]}"; do
  [ -x "$b" ] || continue
  ldd "$b" | awk '$3 ~ /^\// {print $3}' | while read -r so; do
    case $(basename "$so") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libvulkan*|ld-linux*) ;; *) cp -L "$so" .gl/lib/ ;; esac
  done
done
cp -L "$(command -v zstd)" .gl/bin/
ls .gl .gl/lib .gl/bin
