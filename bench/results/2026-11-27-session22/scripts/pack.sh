#!/usr/bin/env bash
# The session's pack step (now bench/pack_gpu.sh, the one copy): the tree built, stripped and packed
# as .pk/bins.tar.xz (carry [".gl", ".pk"]).
exec bash "$(git rev-parse --show-toplevel)/bench/pack_gpu.sh" "$@"
