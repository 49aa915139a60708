#!/usr/bin/env python3
"""Instruction mix of a kernel's main loop, from nvdisasm output (bench/sass_dump.py's *.bin.txt).

The loop is the longest backward branch whose body holds an instruction matching --holds (HMMA:
the tc kernel's tile loop). Prints its address range, its length, and its instructions by opcode
(IMAD.MOV counted as MOV: the register copies the driver's allocator adds). Counts are static:
both sides of a branch inside the loop are included.

  python3 bench/sass_loop.py <file.bin.txt> [--holds HMMA] [--tiles N [--sms 132] [--ghz 1.98]]

With --tiles (iterations of the loop in one call, e.g. warp tiles: tokens x KV heads / 16), also
the call's issue floor: tiles x instructions / (SMs x 4 schedulers x clock), the time the loop
needs at one warp instruction a cycle per scheduler (docs/targets.md).
"""
import argparse
import collections
import re


def instructions(path):
    out = []
    for line in open(path):
        m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?);', line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass")
    ap.add_argument("--holds", default="HMMA")
    ap.add_argument("--tiles", type=int, help="loop iterations a call (warp tiles): print the issue floor")
    ap.add_argument("--sms", type=int, default=132, help="SMs (H100/H200 SXM: 132)")
    ap.add_argument("--ghz", type=float, default=1.98, help="SM clock under load (H200: 1.98)")
    args = ap.parse_args()
    ins = instructions(args.sass)
    best = None
    for at, text in ins:
        m = re.search(r'BRA (0x[0-9a-f]+)', text)
        if not m or int(m.group(1), 16) >= at:
            continue
        body = [x for x in ins if int(m.group(1), 16) <= x[0] <= at]
        if any(args.holds in t for _, t in body) and (best is None or len(body) > len(best)):
            best = body
    if best is None:
        print("no backward branch around %s" % args.holds)
        return
    ops = collections.Counter()
    for _, text in best:
        op = re.sub(r'^@!?U?P[T0-9]+ ', '', text).split()[0]
        ops['MOV' if op.startswith('IMAD.MOV') else op.split('.')[0]] += 1
    print("loop 0x%x-0x%x: %d instructions" % (best[0][0], best[-1][0], len(best)))
    print(", ".join("%s %d" % kv for kv in ops.most_common()))
    if args.tiles:
        us = args.tiles * len(best) / (args.sms * 4 * args.ghz * 1e3)
        print("issue floor: %.1f us (%d tiles x %d instructions / %d schedulers at %.2f GHz)"
              % (us, args.tiles, len(best), args.sms * 4, args.ghz))


if __name__ == "__main__":
    main()
