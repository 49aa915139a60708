#!/usr/bin/env bash
# Installs, from Debian packages, whatever is missing to build, test and run turbokv (run as
# root, or with sudo available). Idempotent; prints nothing when everything is present.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libvulkan-dev glslc glslang-tools spirv-tools
  libgtest-dev libgmock-dev libbenchmark-dev libspdlog-dev nlohmann-json3-dev libcli11-dev
  libxxhash-dev
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
