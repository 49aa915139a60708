#!/usr/bin/env bash
# Session 50 run 1: session 49's prepared run, as it stands there (split16 and chains16 against
# main c86e41c; predictions in its header). Outputs in ../run1/.
# carry [".gl", ".pk"]; pack: bash bench/pack_gpu.sh split16=exp-split16:turboprof,test_decode_tc,test_append_decode chains16=exp-chains16:turboprof,test_decode_tc,test_append_decode
exec bash bench/results/2026-12-03-session49/scripts/next-run1.sh "$@"
