# Sourced on the device machine (see DEVELOPERS.md) before GPU work: unpacks the Vulkan loader
# carried in .gl/, points at the carried libraries and tools, names NVIDIA's driver where the loader
# finds no device by itself (probe: a turboprof binary, $1), and keeps pipelines in one cache
# directory for the session.
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export LD_LIBRARY_PATH="$PWD/.gl/lib:${LD_LIBRARY_PATH:-}"
export PATH="$PWD/.gl/bin:$PATH"  # zstd for bench/sass_dump.py
if [ -z "${1:-}" ] || ! "$1" devices >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export TKV_CACHE_DIR=${TKV_CACHE_DIR:-/tmp/tkv-pipelines}
