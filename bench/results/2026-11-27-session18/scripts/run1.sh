#!/usr/bin/env bash
# Session 18 run 1: session 17's prepared run, as it is (its outputs: ../run1/).
exec bash bench/results/2026-11-26-session17/scripts/next.sh "$@"
