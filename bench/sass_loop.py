#!/usr/bin/env python3
"""Instruction mix of a kernel's main loop, from nvdisasm output (bench/sass_dump.py's *.bin.txt).

The loop is the longest backward branch whose body holds an instruction matching --holds (HMMA:
the tc kernel's tile loop). Prints its address range, its length, and its instructions by opcode
(IMAD.MOV counted as MOV: the register copies the driver's allocator adds). Those counts are
static: both sides of every branch inside the loop are included.

It also counts the local-memory stores and loads (STL, LDL: the driver's register spills) in the
whole pipeline and in the loop.

It also prints the steady path: the instructions one iteration executes when it takes the
shortest way through the loop's branches that still runs every block holding a global load (LDG),
and its instructions by opcode.
For the tile loop that is a tile inside every row's range, no new running maximum and no softcap,
whose next tile's words are fetched: what almost every tile of a long call executes. The branch
decisions are listed (T: taken, N: not), so that a reader can check them against the code.

  python3 bench/sass_loop.py <file.bin.txt> [--holds HMMA] [--tiles N [--sms 132] [--ghz 1.98]]
  python3 bench/sass_loop.py --self-test      (a hand-counted synthetic loop; CI runs it)

With --tiles (iterations of the loop in one call, e.g. warp tiles: tokens x KV heads / 16), also
the call's issue floor from the steady path: tiles x cycles / (SMs x 4 schedulers x clock), with
one cycle an instruction and --mma-cycles (7 on an H200) an HMMA, which holds its scheduler that
long (`turboprof issue --kinds mma,mix`, session 37 run 7; docs/targets.md).

It also sorts the steady path by the pipe each instruction issues to on NVIDIA (alu: logic,
shifts, compares, selects, plain MOV; imad: IMAD, its IMAD.MOV copies included; fp32; mio: shared
memory and shuffles; lsu: global memory; xu: MUFU and conversions; mma; other) and prints the
class-cost estimate of a tile: each class's count times what one more instruction of it cost in
the H200's tile loops (--costs; session 38 runs 1-2, injected work: ALU ~1.9 cycles, IMAD ~1.4,
fp32 ~1.2, an MMA ~5.5; unmeasured classes 1). Alone, ALU and IMAD work issues at 0.5 a cycle a
scheduler (`turboprof issue --kinds alu,imad`, session 38 run 6): the two half-rate pipes.

--list prints the steady path one instruction a line: its address, pipe class and, where the
disassembly carries encodings (nvdisasm -hex, as bench/sass_dump.py writes it), the control bits
the driver scheduled it with: stall cycles before the warp's next instruction (s), yield (y), the
dependency barrier it sets on its result (wb) and on its sources (rb), and those it waits on (w,
a mask of barriers 0-5): how far apart a loop's dependent instructions were placed. With
encodings it also prints the stall sum along the steady path: the cycles the driver's schedule
gives one warp's tile before any wait on a barrier (session 38: the measured cycles a tile a
scheduler, with 3 warps a scheduler, were 1.1-1.3x that sum).
"""
import argparse
import collections
import re
import sys


INSTRUCTION = re.compile(r'\s+/\*([0-9a-f]+)\*/\s+(.*?);')  # nvdisasm: /*address*/ text ;


def instructions(path):
    out = []
    for line in open(path):
        m = INSTRUCTION.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def controls(path):
    """{address: the control bits of the instruction there} from nvdisasm -hex output: the second
    64-bit word's bits 41-44 stall, 45 yield, 46-48 write barrier, 49-51 read barrier (7: none),
    52-57 wait mask."""
    out, at = {}, None
    for line in open(path):
        m = INSTRUCTION.match(line)
        if m:
            at = int(m.group(1), 16)
            continue
        m = re.match(r'\s+/\* (0x[0-9a-f]+) \*/', line)
        if m and at is not None:
            hi = int(m.group(1), 16)
            out[at] = dict(stall=(hi >> 41) & 15, yld=(hi >> 45) & 1, wb=(hi >> 46) & 7, rb=(hi >> 49) & 7,
                           wait=(hi >> 52) & 63)
            at = None
    return out


def mnemonic(text):
    """The instruction's mnemonic with its modifiers, past any predicate (IMAD.MOV.U32)."""
    return re.sub(r'^@!?U?P[T0-9]+ ', '', text).split()[0]


def opcode(text):
    op = mnemonic(text)
    return 'MOV' if op.startswith('IMAD.MOV') else op.split('.')[0]


PIPES = {
    "alu": ("LOP3", "SHF", "MOV", "SEL", "FSEL", "ISETP", "FSETP", "IADD3", "LEA", "PRMT", "VOTE", "FMNMX",
            "IMNMX", "PLOP3", "F2FP", "IABS", "BMSK", "SGXT", "P2R", "R2P"),
    "imad": ("IMAD", "IMUL"),
    "fp32": ("FADD", "FMUL", "FFMA", "HADD2", "HMUL2", "HFMA2"),
    "mio": ("LDS", "STS", "SHFL", "LDSM", "ATOMS"),
    "lsu": ("LDG", "STG", "LDC", "ATOMG", "RED"),
    "xu": ("MUFU", "F2F", "I2F", "F2I", "I2FP", "F2IP", "FRND", "POPC", "FLO", "BREV"),
    "mma": ("HMMA", "IMMA"),
}
CLASSES = tuple(PIPES) + ("other",)


def pipe(text):
    """The pipe class of an instruction, by its mnemonic (IMAD.MOV is imad; a plain MOV is alu)."""
    base = mnemonic(text).split('.')[0]
    return next((k for k, ops in PIPES.items() if base in ops), "other")


def spills(ins):
    """Local-memory stores and loads (STL, LDL) among (address, text) instructions: the driver's
    register spills (the tc kernel uses no local arrays)."""
    ops = collections.Counter(opcode(t) for _, t in ins)
    return {"STL": ops["STL"], "LDL": ops["LDL"]}


def class_cost(texts, costs):
    """(counts by class, the estimate: sum of count x cost, 1 for a class without one)."""
    counts = collections.Counter(pipe(t) for t in texts)
    return counts, sum(n * costs.get(k, 1.0) for k, n in counts.items())


def target(text):
    m = re.search(r'(?:BRA|CALL\.REL\.NOINC)\s+(?:!?U?P\d,\s*)?(0x[0-9a-f]+)', text)
    return int(m.group(1), 16) if m else None


def find_loop(ins, holds):
    """The longest backward branch's body (address, text) that holds an instruction matching holds."""
    best = None
    for at, text in ins:
        m = re.search(r'BRA (0x[0-9a-f]+)', text)
        if not m or int(m.group(1), 16) >= at:
            continue
        body = [x for x in ins if int(m.group(1), 16) <= x[0] <= at]
        if any(holds in t for _, t in body) and (best is None or len(body) > len(best)):
            best = body
    return best


def steady_path(body):
    """(instructions, decisions, their texts, their addresses) of the shortest path from the loop's head to its back edge that
    runs every block holding an LDG. A predicated CALL.REL.NOINC (the loop's exit) falls through."""
    lo, hi = body[0][0], body[-1][0]
    addrs = [a for a, _ in body]
    text = dict(body)
    leaders = {lo}
    for i, (a, t) in enumerate(body):
        if opcode(t) in ('BRA', 'CALL', 'EXIT') and i + 1 < len(body):
            leaders.add(addrs[i + 1])
            tg = target(t)
            if tg is not None and lo <= tg <= hi:
                leaders.add(tg)
    starts = sorted(leaders)
    blocks = {s: [a for a in addrs if s <= a < (starts[k + 1] if k + 1 < len(starts) else hi + 1)]
              for k, s in enumerate(starts)}

    def successors(s):
        last = blocks[s][-1]
        t = text[last]
        following = [x for x in starts if x > s]
        fall = following[0] if following else None
        if last == hi:
            return [None]  # the back edge
        if opcode(t) == 'CALL':
            return [fall]
        if opcode(t) == 'BRA':
            conditional = t.startswith('@') or re.search(r'BRA\s+!?U?P\d,', t)
            return [target(t), fall] if conditional else [target(t)]
        return [fall]

    # The shortest path through the blocks' DAG (a branch back inside the body is taken as not
    # taken), memoized on (block, the next LDG block still to run): a forward path runs the LDG
    # blocks in address order. Ties go to the taken branch first. (A depth-first walk of every
    # path, before session 49, never finished on a two-step 16-row loop of 39 branches.)
    must = sorted(s for s in starts if any(opcode(text[a]) == 'LDG' for a in blocks[s]))
    memo = {}

    def rest(s, k):
        """(instructions, decisions, blocks) of the shortest way from block s to the back edge that
        runs must[k:], or None."""
        if s is None:
            return (0, (), ()) if k == len(must) else None
        if k < len(must) and s > must[k]:
            return None
        key = (s, k)
        if key in memo:
            return memo[key]
        k2 = k + 1 if k < len(must) and s == must[k] else k
        nxt = [x for x in successors(s) if x is None or x > s]
        best = None
        for i, x in enumerate(nxt):
            sub = rest(x, k2)
            if sub is None:
                continue
            d = (('0x%x' % blocks[s][-1], 'T' if i == 0 else 'N'),) if len(nxt) > 1 else ()
            cand = (len(blocks[s]) + sub[0], d + sub[1], (s,) + sub[2])
            if best is None or cand[0] < best[0]:
                best = cand
        memo[key] = best
        return best

    found = rest(lo, 0)
    if found is None:
        return None
    n, decisions, path = found
    return (n, decisions, [text[a] for b in path for a in blocks[b]], [a for b in path for a in blocks[b]])


# A loop in nvdisasm's form, counted by hand: 19 instructions from 0x100 to 0x220, in blocks
# 0x100-0x110 (2), 0x120-0x130 (2, a load: the branch at 0x110 may skip it), 0x140-0x150 (2),
# 0x160-0x190 (4, skipped when the branch at 0x150 is taken), 0x1a0 (1), 0x1b0-0x1c0 (2, skipped
# when 0x1a0's is taken), 0x1d0-0x210 (5, with the predicated exit call) and the back edge 0x220.
# The steady path runs 2 + 2 + 2 + 1 + 5 + 1 = 13.
SELF_TEST = """
        /*0100*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0110*/              @!P0 BRA 0x140 ;
        /*0120*/                   LDG.E R20, desc[UR4][R2.64] ;
        /*0130*/                   IADD3 R2, R2, 0x40, RZ ;
        /*0140*/                   FMUL R5, R5, R6 ;
        /*0150*/              @!P1 BRA 0x1a0 ;
        /*0160*/                   SHFL.BFLY PT, R7, R5, 0x4, 0x1f ;
        /*0170*/                   FMNMX R5, R5, R7, !PT ;
        /*0180*/                   MUFU.EX2 R9, R9 ;
        /*0190*/                   FMUL R10, R10, R9 ;
        /*01a0*/               @P2 BRA P3, 0x1d0 ;
        /*01b0*/                   ISETP.GE.AND P4, PT, R1, R2, PT ;
        /*01c0*/                   FSEL R5, R5, -INF , !P4 ;
        /*01d0*/                   MUFU.EX2 R11, R5 ;
        /*01e0*/                   IMAD.MOV.U32 R12, RZ, RZ, R11 ;
        /*01f0*/                   MOV R13, R11 ;
        /*0200*/                   HMMA.16816.F32 R4, R12, R12, R4 ;
        /*0210*/              @!P5 CALL.REL.NOINC 0x240 ;
        /*0220*/                   BRA 0x100 ;
        /*0230*/                   BRA 0x230 ;
"""


COSTS = {"alu": 1.9, "imad": 1.4, "fp32": 1.2, "mma": 5.5}


def self_test():
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as f:
        f.write(SELF_TEST)
    with open(f.name + ".hex", "w") as h:
        h.write("        /*2580*/                   HMMA.16816.F32 R0, R0, R44.reuse, RZ ;"
                "                                /* 0x0000002c0000723c */\n"
                "                                                                       /* 0x087fe200000018ff */\n")
    body = find_loop(instructions(f.name), "HMMA")
    n, decisions, texts, _ = steady_path(body)
    ops = collections.Counter(opcode(t) for _, t in body)
    checks = [
        ((body[0][0], body[-1][0]), (0x100, 0x220), "the loop's range"),
        (len(body), 19, "static instructions"),
        (ops["MOV"], 2, "register copies (IMAD.MOV and MOV)"),
        (n, 13, "steady path"),
        (decisions, (("0x110", "N"), ("0x150", "T"), ("0x1a0", "T")), "branch decisions"),
        (dict(collections.Counter(opcode(t) for t in texts)),
         {"BRA": 4, "HMMA": 2, "MOV": 2, "LDG": 1, "IADD3": 1, "FMUL": 1, "MUFU": 1, "CALL": 1}, "steady mix"),
        # IADD3 and MOV on alu, IMAD.MOV on imad; 2 x 1.9 + 1.4 + 1.2 + 2 x 5.5 + lsu, xu, 5 other at 1.
        (dict(class_cost(texts, COSTS)[0]),
         {"alu": 2, "imad": 1, "fp32": 1, "lsu": 1, "xu": 1, "mma": 2, "other": 5}, "pipe classes"),
        (round(class_cost(texts, COSTS)[1], 6), 24.4, "class-cost estimate"),
        # An H200 HMMA's second word (session 38): stall 1, yield, no barriers set, waits on 0-2.
        (controls(f.name + ".hex"), {0x2580: dict(stall=1, yld=1, wb=7, rb=7, wait=7)}, "control bits"),
        (spills(body), {"STL": 0, "LDL": 0}, "spills in the loop"),
        (spills([(0, "STL [R1+0x10], R2"), (16, "@!P0 LDL.64 R4, [R1+0x8]"), (32, "LDG.E R0, desc[UR4][R2.64]")]),
         {"STL": 1, "LDL": 1}, "spills counted"),
    ]
    # 40 branches in a row, each skipping one FADD: 2^40 paths, which a walk of every path (before
    # session 49) never finished; the shortest takes every branch: LDG, HMMA, 40 BRA, back edge.
    wide = [(0x100, "LDG.E R0, desc[UR4][R2.64] ;"), (0x110, "HMMA.16816.F32 R4, R8, R12, R4 ;")]
    for i in range(40):
        a = 0x120 + 0x20 * i
        wide += [(a, "@P0 BRA 0x%x ;" % (a + 0x20)), (a + 0x10, "FADD R1, R1, R1 ;")]
    wide.append((0x120 + 0x20 * 40, "BRA 0x100 ;"))
    n_wide, d_wide, _, _ = steady_path(wide)
    checks.append(((n_wide, len(d_wide), {d for _, d in d_wide}), (43, 40, {"T"}), "40 branches in a row"))
    bad = [(got, want, what) for got, want, what in checks if got != want]
    for got, want, what in bad:
        print("sass_loop.py self-test: %s: %r, expected %r" % (what, got, want))
    print("sass_loop.py self-test: %s" % ("%d failure(s)" % len(bad) if bad else "all checks passed"))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass", nargs="?")
    ap.add_argument("--self-test", action="store_true", help="check the path count on a hand-counted loop")
    ap.add_argument("--holds", default="HMMA")
    ap.add_argument("--tiles", type=int, help="loop iterations a call (warp tiles): print the issue floor")
    ap.add_argument("--sms", type=int, default=132, help="SMs (H100/H200 SXM: 132)")
    ap.add_argument("--ghz", type=float, default=1.98, help="SM clock under load (H200: 1.98)")
    ap.add_argument("--mma-cycles", type=float, default=7.0, help="scheduler cycles an HMMA takes (H200: 7)")
    ap.add_argument("--list", action="store_true", help="print the steady path with pipe classes and control bits")
    ap.add_argument("--costs", default=",".join("%s=%g" % kv for kv in COSTS.items()),
                    help="cycles one more instruction of a pipe class costs (the class-cost estimate)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.sass:
        ap.error("no input (or --self-test)")
    every = instructions(args.sass)
    best = find_loop(every, args.holds)
    if best is None:
        print("no backward branch around %s" % args.holds)
        return
    ops = collections.Counter(opcode(text) for _, text in best)
    print("loop 0x%x-0x%x: %d instructions" % (best[0][0], best[-1][0], len(best)))
    print("local memory (register spills): %s in the pipeline, %s in the loop" % tuple(
        ", ".join("%s %d" % kv for kv in spills(x).items()) for x in (every, best)))
    print(", ".join("%s %d" % kv for kv in ops.most_common()))
    steady = steady_path(best)
    if steady is None:
        print("steady path: none found")
        return
    print("steady path: %d instructions (%s)" % (steady[0], " ".join("%s:%s" % d for d in steady[1])))
    print(", ".join("%s %d" % kv for kv in collections.Counter(opcode(t) for t in steady[2]).most_common()))
    try:
        costs = {k: float(v) for k, v in (kv.split("=") for kv in args.costs.split(","))}
    except ValueError:
        ap.error("--costs: a list of class=cycles (classes: %s)" % ", ".join(CLASSES))
    if set(costs) - set(CLASSES):
        ap.error("--costs: unknown class %s (classes: %s)" % (", ".join(sorted(set(costs) - set(CLASSES))),
                                                           ", ".join(CLASSES)))
    ctl = controls(args.sass)
    if args.list:
        for a, t in zip(steady[3], steady[2]):
            c = ctl.get(a)
            bits = ("s%-2d y%d wb%s rb%s w%02x" % (c["stall"], c["yld"], c["wb"] if c["wb"] < 7 else "-",
                                                  c["rb"] if c["rb"] < 7 else "-", c["wait"]) if c else "-")
            print("  %5x %-5s %-20s %s" % (a, pipe(t), bits, t))
    if all(a in ctl for a in steady[3]):
        print("driver's schedule: stall sum %d cycles along the steady path; %d of its instructions wait on a "
              "dependency barrier" % (sum(ctl[a]["stall"] for a in steady[3]),
                                      sum(1 for a in steady[3] if ctl[a]["wait"])))
    counts, est = class_cost(steady[2], costs)
    print("pipes: %s; class-cost estimate %.0f cycles a tile (%s, others 1)" % (
        ", ".join("%s %d" % (k, counts[k]) for k in CLASSES if counts[k]), est,
        ", ".join("%s x%g" % kv for kv in costs.items())))
    if args.tiles:
        print("class-cost estimate: %.1f us" % (args.tiles * est / (args.sms * 4 * args.ghz * 1e3)))
        mmas = sum(1 for t in steady[2] if opcode(t) == "HMMA")
        cycles = steady[0] - mmas + args.mma_cycles * mmas
        us = args.tiles * cycles / (args.sms * 4 * args.ghz * 1e3)
        print("issue floor: %.1f us (%d tiles x %.0f cycles: %d instructions, %d of them MMAs at %g cycles; "
              "%d schedulers at %.2f GHz)" % (us, args.tiles, cycles, steady[0], mmas, args.mma_cycles,
                                              args.sms * 4, args.ghz))


if __name__ == "__main__":
    sys.exit(main())
