#!/usr/bin/env bash
# pack.sh, plus a baseline turboprof ($1, built from the commit before the change) as
# build-slim/profile/turboprof-base, for A/B runs in one GPU call.
set -euo pipefail
base=$(realpath "$1")
D=$(dirname "$0")
bash "$D/pack.sh" >/dev/null
cp "$base" build-slim/profile/turboprof-base
tar cf - build-slim | xz -T2 -3 > .pk/bins.tar.xz
ls -la .pk/bins.tar.xz
