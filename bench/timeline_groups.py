#!/usr/bin/env python3
"""Per group, who arrives last and merges: a reading of `turboprof timeline --workgroups` JSON.

Usage: bench/timeline_groups.py timeline.json [more.json ...] (a file, or `-` for stdin; the
document `--json` prints or `--out` writes).

For each row (type, variant, depth) and over its traced calls, medians in µs from the call's first
start, per kind of workgroup with tokens: `fresh` (a fused call's splits that hold new tokens:
they stamp new_rows), `tail` (the scalar kernel's fused tails) and `plain` (the other splits):
  prologue    its prologue's end (query rows, tables; fresh: and the new rows)
  tiles       its tiles' end
  arrival     its arrival (partials written, counted)
  last plain  the group's latest plain arrival
  merges      the share of groups whose merger is of that kind
  end         the call's last stamp
A group is a (KV head x row chunk, sequence): the workgroups with the same id y and z.
"""
import collections
import json
import statistics
import sys


def kind(w):
    if w["tail"]:
        return "tail"
    return "fresh" if w["new_rows_us"] is not None else "plain"


def median(v):
    return statistics.median(v) if v else float("nan")


def summarize(row):
    phases = collections.defaultdict(lambda: ([], [], []))  # kind -> ends of (prologue, tiles, arrival)
    last_plain, ends = [], []
    merges = collections.Counter()
    groups = 0
    for call in row["calls"]:
        by_group = collections.defaultdict(list)
        end = 0.0
        for w in call["workgroups"]:
            end = max([end] + [t for t in w["at_us"] if t is not None])
            if w["had_tokens"]:
                by_group[(w["id"][1], w["id"][2])].append(w)
        ends.append(end)
        for ws in by_group.values():
            groups += 1
            plain = [w["at_us"][3] for w in ws if kind(w) == "plain" and w["at_us"][3] is not None]
            if plain:
                last_plain.append(max(plain))
            for w in ws:
                k = kind(w)
                for i, t in enumerate(w["at_us"][1:4]):
                    if t is not None:
                        phases[k][i].append(t)
                merges[k] += w["merged"]
    label = f'{row["k_type"]}/{row["v_type"]} {row["variant"]} {row["ctx"]}{" fused" if row.get("fused") else ""}'
    print(f"{label}: {len(row['calls'])} calls, {groups} groups; end {median(ends):.2f} us, "
          f"last plain arrival {median(last_plain):.2f}")
    for k in ("plain", "fresh", "tail"):
        if k in phases:
            prologue, tiles, arrival = (median(v) for v in phases[k])
            print(f"  {k:5}  prologue {prologue:6.2f}  tiles {tiles:6.2f}  arrival {arrival:6.2f}  "
                  f"merges {merges[k] / max(groups, 1):5.0%}")


def main(paths):
    for path in paths:
        doc = json.load(sys.stdin if path == "-" else open(path))
        rows = [r for r in doc.get("rows", []) if "calls" in r]
        if not rows:
            sys.exit(f"{path}: no row has calls: run turboprof timeline with --workgroups")
        for row in rows:
            summarize(row)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
