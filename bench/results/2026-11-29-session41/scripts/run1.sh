#!/usr/bin/env bash
# Session 41, run 1: session 40's prepared script, as it stands (its header says how the
# experiment was packed, what it dumps and what it predicts).
exec bash bench/results/2026-11-29-session40/scripts/next-fused-sass.sh
