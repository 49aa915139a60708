#!/usr/bin/env bash
# Session 39, run 5. carry [".gl", ".pk"]; pack (at f543353): bash bench/pack_gpu.sh base=c3952fd:turboprof
# f543353 makes run 4's t256x8 the product: turbo4's 256-entry table wherever it is the only
# table, one workgroup an SM of eight subgroups. Its GPU tests (tc and fused append), then base
# (c3952fd) against it over the shapes run 4 did not measure: 1K-4K (fixed cost), m 2 and 3,
# turbo4 beside q8_0 and f16. Prediction: 8K and up as run 4 (-10 to -18%); 1K-4K within +-5%
# (one workgroup of 8 subgroups an SM holds as many warps as two of 4); the mixes gain less (one
# side's sign work).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt 2>&1
tst tc 240 build-slim/tests/test_decode_tc &
tst app 240 build-slim/tests/test_append_decode &
wait
ab() {  # FILE ARGS...
  local f=$1 rep l; shift
  for rep in 1 2; do for l in base main; do rows $f "$rep $l" "$l" "$@"; done; done
  lg "$f"
}
ab ab.txt profile --types turbo4 --ctx 1k,2k,4k,8k,32k,128k --modes 0 --repeat 20
ab m2.txt profile --types turbo4 --ctx 8k,32k --m 2 --modes 0 --repeat 20
ab m3.txt profile --types turbo4 --ctx 8k,32k --m 3 --modes 0 --repeat 20
ab m8.txt profile --types turbo4 --ctx 32k --m 8 --modes 0 --repeat 20
ab b16.txt profile --types turbo4 --ctx 8k --batch 16 --modes 0 --repeat 20
ab mix.txt profile --types turbo4/q8_0,q8_0/turbo4,turbo4/f16 --ctx 8k,32k --modes 0 --repeat 20
cat $R/progress.txt $R/device.txt
for f in ab m2 m3 m8 b16 mix; do echo "== $f"; python3 bench/ab_summary.py $R/$f.txt; done
bundle ab.txt tests.txt
