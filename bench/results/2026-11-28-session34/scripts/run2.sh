#!/usr/bin/env bash
# carry [".gl", ".pk"]; packed on branch nt-late (its first commit):
# `bash bench/pack_gpu.sh base=9a6d280:turboprof,bench_append`
# main = nt-late: nt-slot with the new bits' pool store after the split's arrival (after the
# merge in the group's last split); both rows' new-token scores from one set of centroids.
# base = main 9a6d280 (kernels of be64a93).
# Expected: the tests pass; the fresh split arrives with the plain ones (~7.2 us), its store
# overlapping the last split's merge: turbo2 ratio_pct ~5 -> ~1-3% unless the fresh split is
# often the group's last (then + ~1.5 us a call).
source bench/gpu_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt 2>&1
fused_ab 3 base main
