#!/usr/bin/env bash
# Session 51 run 2: session 50's prepared 4K check (main against 12690c3^ and e1fa042), as
# prepared, right after run 1 on the same pack (run1.sh's header).
exec bash bench/results/2026-12-03-session50/scripts/next-run1.sh
