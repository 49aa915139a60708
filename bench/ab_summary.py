#!/usr/bin/env python3
"""Side-by-side medians of an A/B profile log (bench/gpu_session.sh ab and the session scripts).

Input lines: `round label type variant mode context us ...` (context as turboprof prints it: 64,
1K, 128K). Output: one line per (type, mode, context), the median over rounds of each label, in
the order the labels first appear.
"""
import collections
import statistics
import sys


def context_tokens(c):
    return float(c.rstrip('K')) * (1024 if c.endswith('K') else 1)


def main(path):
    runs = collections.defaultdict(list)
    labels = []
    for line in open(path):
        f = line.split()
        if len(f) < 7:
            continue
        _, label, typ, _, mode, ctx, us = f[:7]
        if not us.replace('.', '', 1).isdigit():
            continue  # (a header row)
        runs[(typ, mode, ctx, label)].append(float(us))
        if label not in labels:
            labels.append(label)
    points = sorted({k[:3] for k in runs}, key=lambda k: (k[0], k[1], context_tokens(k[2])))
    print("type mode ctx " + " ".join(labels))
    for p in points:
        cells = ["%.1f" % statistics.median(runs[p + (l,)]) if runs.get(p + (l,)) else "-" for l in labels]
        print(*p, " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
