#!/usr/bin/env bash
# Session 15 run 1 (H100, 935fbdd; build-slim carried with .gl): test_timeline and turboprof
# timeline for every type at 1K-128K (bench/gpu_session.sh), then forced split counts at 1K and 8K,
# batch 16 at 8K and m 8 at 32K.
export TKV_BUILD=build-slim; source bench/gpu_env.sh build-slim/profile/turboprof; export OUT
bash bench/gpu_session.sh devices timeline 2>&1 | tail -60
P=build-slim/profile/turboprof
(for s in 1 2 4 8; do TKV_SPLITS=$s $P timeline --types turbo3,f16 --ctx 1k,8k --repeat 20 2>&1 | grep -E '^(turbo3|f16) ' | sed "s/^/splits$s /"; done
 $P timeline --types turbo3,q8_0 --ctx 8k --batch 16 --repeat 10 2>&1 | grep -E '^(turbo3|q8_0) ' | sed 's/^/b16 /'
 $P timeline --types turbo3 --ctx 32k --m 8 --repeat 10 2>&1 | grep -E '^turbo3 ' | sed 's/^/m8 /') | tee $OUT/timeline/extra.txt
