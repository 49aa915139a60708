#!/usr/bin/env bash
# Session 19 run 1: session 18's prepared run for the q8-tc branch (1022ab4), as it was written:
# test_decode_tc (RowTypesAreExact with q8_0 pairs), then q8_0 on the scalar kernel against tc.
# Outputs: run1/q8/.
exec bash bench/results/2026-11-27-session18/scripts/next-q8.sh
