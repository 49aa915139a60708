# Sourced first by a session's GPU script on the device machine (carry [".gl", ".pk"] from
# bench/pack_gpu.sh): unpacks the binaries into build-slim/, sets up the carried Vulkan loader
# (gpu_env.sh), and gives R ($OUT), P (turboprof) and lg (a line, with the seconds since the start,
# into $R/progress.txt).
python3 -c "import tarfile; tarfile.open('.pk/bins.tar.xz').extractall()"
source bench/gpu_env.sh build-slim/profile/turboprof
R=$OUT; T0=$SECONDS; P=build-slim/profile/turboprof
lg() { echo "[$((SECONDS-T0))s] $*" >> "$R/progress.txt"; }
