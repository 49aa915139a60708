#!/usr/bin/env bash
# Session 51 run 1: session 50's prepared k8 run, as prepared (branch exp-k8 rebased on 5db4420).
# carry [".gl", ".pk"]; packed at main with both runs' labels:
# bash bench/pack_gpu.sh pre49=12690c3^:turboprof,bench_append s46=e1fa042:turboprof,bench_append k8=exp-k8:turboprof,test_decode_tc,test_append_decode
exec bash bench/results/2026-12-03-session50/scripts/next-run2.sh
