#!/usr/bin/env python3
"""The P1-P8 table of performance.md from one GPU session's JSON outputs.

Inputs (any order; files, directories searched for *.json, or .tar.gz archives of them), each
recognised by its content:
  turboprof sweep --json / sweep.json      rows per type x depth, with the decode step (step_us)
  turboprof profile --json / profile.json  rows per type x depth x mode (m, batch from the document)
  bench/peer_pytorch.py output             PyTorch SDPA rows per backend x batch x depth
  bench_append --benchmark_format=json     append/... and step/... rows with counters
  llama.cpp Vulkan figures (optional)      {"tool": "llamacpp_vulkan", "device": {"name": ..},
                                            "rows": [{"type": "q8_0", "ctx": 16384, "batch": 1,
                                            "us_median": 58.7}]}  (filled in by hand or a harness;
                                            "documented": "where from" marks a figure not measured
                                            in this run: bench/testdata/peers/)

For each target: our figure, the ceiling or peer figure it is held against (read floors come from
the same row, peers from the same session), the ratio, the bound, and met / NOT met / not measured
(an input it needs is missing). Only workload llama8b, mode 0 and m 1 count unless a target says
otherwise (P2 uses mode 1 rows, P6 the m = 2, 3, 8 runs, P8 the batch-16 run).

  python3 bench/targets.py OUT/sweep.json OUT/profile-*.json OUT/peer.json OUT/append.json
  python3 bench/targets.py OUT/            # every *.json under it, and *.tar.gz
  python3 bench/targets.py --detail ...    # a line per type / depth under each target
  python3 bench/targets.py --self-test     # synthetic inputs and bench/testdata/targets/
"""

import argparse
import io
import json
import os
import sys
import tarfile
import tempfile

TYPES = ("f16", "q8_0", "turbo2", "turbo3", "turbo4")
LAYERS = {"llama8b": 32, "qwen7b": 28, "mha64": 24, "wide256": 32}  # profile/workloads.cpp
K = 1024
FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "targets")

# Bounds (performance.md, "Targets"); P6's "no step between M = 2 and M = 3" is read as
# t(M=3) <= STEP_BOUND x t(M=2) (our reading: the target names no number).
P1_BOUND = 1.25
P2_BOUND = 1.10
P3_TURBO3, P3_TURBO4, P3_LLAMACPP = 2.2, 1.8, 4.0
P4_BOUND = 4.0
P5_CALL_US = 6.0
P6_BOUND, P6_STEP_BOUND = 1.25, 1.10
P7_PCT = 5.0
P8_BOUND = 1.15


# ------------------------------------------------------------------------------------------------
# Loading


def iter_documents(paths):
    """(name, parsed JSON) for every input: files, directories (recursively), .tar.gz members."""
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in sorted(os.walk(path)):
                for f in sorted(files):
                    if f.endswith(".json") or f.endswith(".tar.gz") or f.endswith(".tgz"):
                        yield from iter_documents([os.path.join(root, f)])
        elif path.endswith(".tar.gz") or path.endswith(".tgz"):
            with tarfile.open(path, "r:gz") as tar:
                for m in sorted(tar.getmembers(), key=lambda m: m.name):
                    if m.isfile() and m.name.endswith(".json"):
                        data = tar.extractfile(m).read()
                        yield from parse_text("%s:%s" % (path, m.name), data.decode("utf-8", "replace"))
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                yield from parse_text(path, f.read())


def parse_text(name, text):
    try:
        yield name, json.loads(text)
    except ValueError:
        # Google Benchmark may print a line before its JSON on stdout; try from the first '{'.
        at = text.find("{")
        try:
            yield name, json.loads(text[at:]) if at > 0 else None
        except ValueError:
            yield name, None


def kind_of(doc):
    if not isinstance(doc, dict):
        return None
    if doc.get("tool") == "peer_pytorch":
        return "peer"
    if doc.get("tool") == "llamacpp_vulkan":
        return "llamacpp"
    if "benchmarks" in doc and "context" in doc:
        return "append" if any(str(b.get("name", "")).startswith(("append/", "step/"))
                               for b in doc["benchmarks"]) else None
    if isinstance(doc.get("rows"), list) and isinstance(doc.get("workload"), dict):
        rows = doc["rows"]
        if "step_repeat" in doc or any("step_us" in r for r in rows):
            return "sweep"
        if any("us_median" in r for r in rows) or not rows:
            return "profile"
    return None


def type_label(row):
    k, v = row.get("k_type") or row.get("type"), row.get("v_type") or row.get("type")
    return k if k == v else "%s/%s" % (k, v)


def parse_label(text):
    out = {}
    for part in str(text).split():
        if "=" in part:
            a, b = part.split("=", 1)
            out[a] = b
    return out


class Inputs:
    def __init__(self):
        self.rows = []        # turboprof rows, normalised
        self.peer = []        # PyTorch rows
        self.peer_skipped = []
        self.llamacpp = []
        self.append = []      # bench_append rows
        self.devices = {}     # file -> device name
        self.drivers = set()  # our measurements' Vulkan drivers ("NVIDIA 580.159.04")
        self.files = []       # (name, kind)
        self.cpu = False
        self.ignored = []

    def add(self, name, doc):
        kind = kind_of(doc)
        if kind is None:
            self.ignored.append(name)
            return
        self.files.append((name, kind))
        if kind in ("sweep", "profile"):
            dev = doc.get("device") or {}
            self.devices[name] = dev.get("name")
            self.cpu = self.cpu or dev.get("class") == "cpu"
            driver = " ".join(str(dev[k]) for k in ("driver", "driver_info") if dev.get(k))
            if driver:
                self.drivers.add(driver)
            w = (doc.get("workload") or {}).get("name")
            for r in doc.get("rows", []):
                if "us_median" not in r:
                    continue
                self.rows.append({
                    "file": name, "kind": kind, "workload": w,
                    "batch": int(r.get("batch", doc.get("batch", 1))),
                    "m": int(r.get("m", doc.get("m", 1))),
                    "type": type_label(r), "ctx": int(r["ctx"]), "mode": int(r.get("mode", 0)),
                    "variant": r.get("variant"), "us": float(r["us_median"]),
                    "floor": r.get("read_floor_us"), "kv_bytes": r.get("kv_bytes"),
                    "step_us": r.get("step_us"), "step_layers": r.get("step_layers"),
                })
        elif kind == "peer":
            dev = doc.get("device") or {}
            self.devices[name] = dev.get("name")
            w = (doc.get("workload") or {}).get("name")
            for r in doc.get("rows", []):
                if "check" in r:  # a wrong result is no baseline
                    self.peer_skipped.append(dict(r, file=name, reason=r["check"]))
                    continue
                self.peer.append(dict(r, file=name, workload=w))
            for s in doc.get("skipped", []):
                self.peer_skipped.append(dict(s, file=name))
        elif kind == "llamacpp":
            dev = (doc.get("device") or {}).get("name")
            self.devices[name] = dev
            for r in doc.get("rows", []):
                self.llamacpp.append(dict(r, file=name, device=dev, documented=doc.get("documented")))
        elif kind == "append":
            ctx = doc.get("context", {})
            self.devices[name] = ctx.get("device")
            for b in doc["benchmarks"]:
                if b.get("run_type", "iteration") != "iteration" or "label" not in b:
                    continue
                lab = parse_label(b["label"])
                nm = str(b.get("name", ""))
                self.append.append({
                    "file": name, "what": nm.split("/", 1)[0], "name": nm,
                    "workload": nm.split("/")[1] if nm.count("/") >= 1 else None,
                    "type": lab.get("k") if lab.get("k") == lab.get("v") else "%s/%s" % (lab.get("k"), lab.get("v")),
                    "format": lab.get("format"), "layers": int(float(lab.get("layers", b.get("layers", 0)))),
                    "ctx": int(float(lab.get("ctx", b.get("ctx", 0)))),
                    "append_us": b.get("append_us"), "step_us": b.get("step_us"), "ratio_pct": b.get("ratio_pct"),
                    # fused rows: the step with the append fused into each decode call, and without appends
                    "fused_us": b.get("fused_step_us"), "decode_us": b.get("decode_step_us"),
                })


def load(paths):
    inp = Inputs()
    for name, doc in iter_documents(paths):
        inp.add(name, doc)
    return inp


# ------------------------------------------------------------------------------------------------
# Evaluation


class Result:
    """One line of the table."""

    def __init__(self, target, case, ours=None, ref=None, ratio=None, bound=None, op="<=", status=None, note="",
                 unit="x", detail=False):
        self.target, self.case, self.ours, self.ref, self.ratio = target, case, ours, ref, ratio
        self.bound, self.op, self.note, self.unit, self.detail = bound, op, note, unit, detail
        if status is None:
            if ratio is None or bound is None:
                status = "not measured"
            else:
                ok = ratio <= bound if op == "<=" else ratio >= bound
                status = "met" if ok else "NOT met"
        self.status = status

    def as_dict(self):
        return {k: getattr(self, k) for k in ("target", "case", "ours", "ref", "ratio", "bound", "op", "status",
                                              "note", "unit", "detail")}


def not_measured(target, case, why):
    return Result(target, case, status="not measured", note=why)


class Evaluator:
    def __init__(self, inp, workload="llama8b", step_bound=P6_STEP_BOUND):
        self.inp = inp
        self.workload = workload
        self.step_bound = step_bound

    # Rows of our kernel matching the filters; prefer files of the kinds in `prefer`, in order.
    def select(self, prefer=("sweep", "profile"), file=None, **f):
        f.setdefault("workload", self.workload)
        f.setdefault("batch", 1)
        f.setdefault("m", 1)
        f.setdefault("mode", 0)
        ctx_min, ctx_max = f.pop("ctx_min", None), f.pop("ctx_max", None)

        def ok(r):
            if file is not None and r["file"] != file:
                return False
            if ctx_min is not None and r["ctx"] < ctx_min:
                return False
            if ctx_max is not None and r["ctx"] > ctx_max:
                return False
            return all(r.get(k) == v for k, v in f.items())

        for kind in prefer:
            rows = [r for r in self.inp.rows if r["kind"] == kind and ok(r)]
            if rows:
                return rows
        return []

    @staticmethod
    def best_per(rows, key):
        """The fastest row per key (variants of one point: the best one)."""
        out = {}
        for r in rows:
            k = key(r)
            if k not in out or r["us"] < out[k]["us"]:
                out[k] = r
        return out

    def one(self, prefer=("sweep", "profile"), **f):
        rows = self.select(prefer, **f)
        return min(rows, key=lambda r: r["us"]) if rows else None

    def pair_same_file(self, prefer, fa, fb):
        """Rows a, b (each the best of its filter) from one file when any file has both, else the
        preferred one of each; and whether they came from one file."""
        files = []
        for kind in prefer:
            files += [n for n, k in self.inp.files if k == kind]
        for name in files:
            a, b = self.one(prefer, file=name, **fa), self.one(prefer, file=name, **fb)
            if a and b:
                return a, b, True
        return self.one(prefer, **fa), self.one(prefer, **fb), False

    # P1: every type, ctx >= 8K, batch 1: time <= 1.25 x read floor.
    def p1(self):
        out = []
        for t in TYPES:
            rows = [r for r in self.select(type=t, ctx_min=8 * K) if r.get("floor")]
            if not rows:
                out.append(not_measured("P1", "%s, ctx >= 8K" % t, "no batch-1 mode-0 rows"))
                continue
            per_ctx = self.best_per(rows, lambda r: r["ctx"])
            worst = max(per_ctx.values(), key=lambda r: r["us"] / r["floor"])
            out.append(Result("P1", "%s %s (of %d depths)" % (t, lbl(worst["ctx"]), len(per_ctx)),
                              worst["us"], worst["floor"], worst["us"] / worst["floor"], P1_BOUND,
                              note="vs read floor (%s)" % worst["kind"], detail=True))
        return summarize("P1", "x floor, >= 8K", out)

    # P2: turbo3 mode 0 within 10% of mode 1 at ctx >= 8K.
    def p2(self):
        out = []
        prefer = ("profile", "sweep")
        ctxs = sorted({r["ctx"] for r in self.select(prefer, type="turbo3", mode=1, ctx_min=8 * K)})
        for c in ctxs:
            a, b, same = self.pair_same_file(prefer, dict(type="turbo3", ctx=c, mode=0),
                                             dict(type="turbo3", ctx=c, mode=1))
            if a and b:
                out.append(Result("P2", "turbo3 %s" % lbl(c), a["us"], b["us"], a["us"] / b["us"], P2_BOUND,
                                  note="mode 0 vs mode 1" + ("" if same else " (different runs)"), detail=True))
        if not out:
            return [not_measured("P2", "turbo3 mode 0 / mode 1, >= 8K", "no turbo3 mode-1 rows at >= 8K")]
        return summarize("P2", "mode 0 / mode 1", out)

    # P3: turbo3 >= 2.2x and turbo4 >= 1.8x faster than q8_0 at ctx >= 32K; q8_0 >= 4x llama.cpp at 16K.
    def p3(self):
        res = []
        for t, bound, tag in (("turbo3", P3_TURBO3, "P3a"), ("turbo4", P3_TURBO4, "P3b")):
            out = []
            ctxs = sorted({r["ctx"] for r in self.select(type=t, ctx_min=32 * K)})
            for c in ctxs:
                ours, ref, same = self.pair_same_file(("sweep", "profile"), dict(type=t, ctx=c),
                                                      dict(type="q8_0", ctx=c))
                if ours and ref:
                    out.append(Result(tag, "%s %s" % (t, lbl(c)), ours["us"], ref["us"], ref["us"] / ours["us"], bound,
                                      op=">=", note="speed-up over our q8_0" + ("" if same else " (different runs)"),
                                      detail=True))
            if out:
                res += summarize(tag, "vs q8_0, >= 32K", out, worst=min)
            else:
                res.append(not_measured(tag, "%s vs q8_0, >= 32K" % t, "no %s and q8_0 rows at >= 32K" % t))
        ours = self.one(type="q8_0", ctx=16 * K)
        peer = [r for r in self.inp.llamacpp if r.get("type") == "q8_0" and int(r.get("ctx", 0)) == 16 * K
                and int(r.get("batch", 1)) == 1]
        if ours and peer:
            # (A figure measured in this run wins over a documented one: performance.md's table,
            # bench/testdata/peers/, where the GPU machine has no llama.cpp to run.)
            p = min(peer, key=lambda r: (bool(r.get("documented")), r["us_median"]))
            note = "speed-up over llama.cpp"
            if p.get("documented"):
                note += "; its figure documented (%s), not this run's" % (p.get("device") or "device unknown")
            res.append(Result("P3c", "q8_0 16K vs llama.cpp Vulkan q8_0", ours["us"], p["us_median"],
                              p["us_median"] / ours["us"], P3_LLAMACPP, op=">=", note=note))
        else:
            res.append(not_measured("P3c", "q8_0 16K vs llama.cpp Vulkan q8_0",
                                    "no llama.cpp Vulkan figure in this run" if ours else "no q8_0 16K row"))
        return res

    # P4: turbo3 >= 4x faster than the best PyTorch f16 SDPA backend at 128K, batch 1.
    def p4(self):
        ours = self.one(type="turbo3", ctx=128 * K)
        peers = [r for r in self.inp.peer if int(r["ctx"]) == 128 * K and int(r["batch"]) == 1
                 and r.get("workload", self.workload) == self.workload]
        case = "turbo3 128K vs best PyTorch SDPA"
        if not ours or not peers:
            why = []
            if not ours:
                why.append("no turbo3 128K row")
            if not peers:
                skipped = [s for s in self.inp.peer_skipped if int(s.get("ctx", 0)) == 128 * K]
                why.append("no PyTorch 128K row" + (" (%s)" % skipped[0]["reason"][:80] if skipped else ""))
            return [not_measured("P4", case, "; ".join(why))]
        p = min(peers, key=lambda r: r["us_median"])
        return [Result("P4", "%s (%s)" % (case, p["backend"]), ours["us"], p["us_median"], p["us_median"] / ours["us"],
                       P4_BOUND, op=">=", note="speed-up over PyTorch")]

    # P5: ctx <= 4K: one call <= 6 µs; a decode step <= layers x 6 µs.
    def p5(self):
        calls, steps = [], []
        for t in TYPES:
            rows = self.select(type=t, ctx_max=4 * K)
            if not rows:
                calls.append(not_measured("P5a", "%s, ctx <= 4K" % t, "no rows at <= 4K"))
                steps.append(not_measured("P5b", "%s step, ctx <= 4K" % t, "no rows at <= 4K"))
                continue
            per_ctx = self.best_per(rows, lambda r: r["ctx"])
            w = max(per_ctx.values(), key=lambda r: r["us"])
            calls.append(Result("P5a", "%s %s (of %d depths)" % (t, lbl(w["ctx"]), len(per_ctx)), w["us"],
                                P5_CALL_US, w["us"] / P5_CALL_US, 1.0, note="one call vs 6 us", detail=True))
            srows = [r for r in per_ctx.values() if r.get("step_us") and r.get("step_layers")]
            srows = srows or [r for r in self.select(("sweep",), type=t, ctx_max=4 * K) if r.get("step_us")]
            if srows:
                s = max(srows, key=lambda r: r["step_us"] / r["step_layers"])
                bound_us = P5_CALL_US * s["step_layers"]
                steps.append(Result("P5b", "%s %s, %d layers" % (t, lbl(s["ctx"]), s["step_layers"]),
                                    s["step_us"], bound_us, s["step_us"] / bound_us, 1.0,
                                    note="step vs layers x 6 us; %.2fx its calls" % (
                                        s["step_us"] / (s["step_layers"] * s["us"])), detail=True))
            else:
                steps.append(not_measured("P5b", "%s step, ctx <= 4K" % t, "no step_us (sweep) rows"))
        return summarize("P5a", "call, <= 4K", calls) + summarize("P5b", "step, <= 4K", steps)

    # P6: m = 8 <= 1.25x m = 1 at 32K; no step between m = 2 and m = 3.
    def p6(self):
        res = []
        prefer = ("profile", "sweep")
        for tag, (ma, mb), bound, title in (("P6a", (8, 1), P6_BOUND, "m=8 / m=1, 32K"),
                                            ("P6b", (3, 2), self.step_bound, "m=3 / m=2, 32K")):
            out = []
            for t in TYPES:
                a, b = self.one(prefer, type=t, ctx=32 * K, m=ma), self.one(prefer, type=t, ctx=32 * K, m=mb)
                if a and b:
                    out.append(Result(tag, "%s 32K" % t, a["us"], b["us"], a["us"] / b["us"], bound,
                                      note="m=%d vs m=%d" % (ma, mb), detail=True))
            if out:
                res += summarize(tag, title, out)
            else:
                res.append(not_measured(tag, title, "no m=%d and m=%d rows at 32K" % (ma, mb)))
        return res

    # P7: append of one token for all layers <= 5% of the decode step at 4K.
    def p7(self):
        # The append's share of the 4K step, by the better of the two ways bench_append measures:
        # separate appends (append rows: append / step) and the append fused into the decode calls
        # (fused rows: (fused step - decode step) / decode step); each the worse of its formats.
        out = []
        rows = [r for r in self.inp.append if r.get("ratio_pct") is not None and r["workload"] in (None, self.workload)]
        for t in sorted({r["type"] for r in rows}, key=type_order):
            best = None
            for what in ("append", "fused"):
                mine = [r for r in rows if r["type"] == t and r["what"] == what]
                if not mine:
                    continue
                w = max(mine, key=lambda r: r["ratio_pct"])
                if what == "append":
                    cand = (w["ratio_pct"], w["append_us"], w["step_us"], "separate append (%s rows) vs decode step" % w["format"], w)
                else:
                    cand = (w["ratio_pct"], w["fused_us"] - w["decode_us"], w["decode_us"],
                            "append fused into the decode calls (%s rows): fused step %.0f us vs decode step"
                            % (w["format"], w["fused_us"]), w)
                if best is None or cand[0] < best[0]:
                    best = cand
            pct, value, ref, note, w = best
            shape_ok = w["ctx"] == 4 * K and w["layers"] == LAYERS.get(self.workload, w["layers"])
            if not shape_ok:
                note += "; shape differs from the target's (ctx %d, %d layers)" % (w["ctx"], w["layers"])
            out.append(Result("P7", "%s, %d layers, %s" % (t, w["layers"], lbl(w["ctx"])), value, ref, pct, P7_PCT,
                              note=note, unit="%", detail=True))
        if not out:
            return [not_measured("P7", "append / decode step, 4K", "no bench_append JSON")]
        return summarize("P7", "append / step, 4K", out)

    # P8: batch 16, 8K ragged: time <= 1.15 x read floor.
    def p8(self):
        out = []
        for t in TYPES:
            r = self.one(("profile", "sweep"), type=t, ctx=8 * K, batch=16)
            if r and r.get("floor"):
                out.append(Result("P8", "%s batch 16 8K" % t, r["us"], r["floor"], r["us"] / r["floor"], P8_BOUND,
                                  note="vs read floor", detail=True))
            else:
                out.append(not_measured("P8", "%s batch 16 8K" % t, "no batch-16 8K row"))
        return summarize("P8", "x floor, batch 16", out)

    def all(self):
        res = []
        for f in (self.p1, self.p2, self.p3, self.p4, self.p5, self.p6, self.p7, self.p8):
            res += f()
        return res


def type_order(t):
    return (TYPES.index(t) if t in TYPES else len(TYPES), t)


def summarize(target, title, lines, worst=max):
    """A headline line (the worst measured case; NOT met when any case misses, not measured when
    none was measured) followed by the per-case lines (printed with --detail)."""
    for r in lines:
        r.detail = True
    measured = [r for r in lines if r.ratio is not None]
    missing = [r for r in lines if r.ratio is None]
    if not measured:
        head = not_measured(target, title, "; ".join(sorted({r.note for r in missing})) or "no input")
    else:
        w = worst(measured, key=lambda r: r.ratio)
        failed = [r for r in measured if r.status != "met"]
        status = "NOT met" if failed else ("met" if not missing else "met (partly measured)")
        note = w.note
        if failed:
            note += "; %d of %d cases miss" % (len(failed), len(measured))
        if missing:
            note += "; %d not measured" % len(missing)
        head = Result(target, "%s: worst %s" % (title, w.case.split(" (")[0]), w.ours, w.ref, w.ratio, w.bound, w.op, status, note,
                      w.unit)
    return [head] + lines


def lbl(ctx):
    return "%dK" % (ctx // K) if ctx % K == 0 else str(ctx)


# ------------------------------------------------------------------------------------------------
# Output


def fmt_us(x):
    if x is None:
        return "-"
    return "%.1f us" % x if x < 1000 else "%.0f us" % x


def fmt_ratio(r):
    if r.ratio is None:
        return "-"
    return "%.2f%%" % r.ratio if r.unit == "%" else "%.2fx" % r.ratio


def fmt_bound(r):
    if r.bound is None:
        return "-"
    op = {"<=": "<=", ">=": ">="}[r.op]
    return "%s %g%s" % (op, r.bound, "%" if r.unit == "%" else "x")


def render(results, inp, detail=False, markdown=False):
    lines = []
    devs = sorted({d for d in inp.devices.values() if d})
    lines.append("device: %s" % (", ".join(devs) if devs else "unknown"))
    if inp.drivers:
        lines.append("driver: %s" % ", ".join(sorted(inp.drivers)))
    if inp.cpu:
        lines.append("note: a CPU Vulkan device (lavapipe) ran these: the figures test the tooling, not the targets")
    if len(devs) > 1:
        lines.append("note: the inputs name more than one device; compare only figures of one device")
    head = ("target", "case", "ours", "ref", "ratio", "bound", "status", "note")
    rows = []
    for r in results:
        if r.detail and not detail:
            continue
        rows.append((("  " if r.detail else "") + r.target, r.case, fmt_us(r.ours), fmt_us(r.ref), fmt_ratio(r),
                     fmt_bound(r), r.status, r.note))
    if markdown:
        lines.append("")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for row in rows:
            lines.append("| " + " | ".join(c.replace("|", "/") for c in row) + " |")
    else:
        widths = [max(len(head[i]), *(len(row[i]) for row in rows)) if rows else len(head[i]) for i in range(len(head))]
        widths[1] = min(widths[1], 64)
        lines.append("  ".join(h.ljust(widths[i]) for i, h in enumerate(head[:-1])) + "  " + head[-1])
        for row in rows:
            lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(row[:-1])) + "  " + row[-1])
    heads = [r for r in results if not r.detail]
    met = sum(1 for r in heads if r.status.startswith("met"))
    nm = sum(1 for r in heads if r.status == "not measured")
    lines.append("")
    lines.append("%d of %d targets met, %d not met, %d not measured" % (met, len(heads), len(heads) - met - nm, nm))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# Synthetic inputs and the self-test


def synthetic_documents():
    """A set of inputs as one GPU session writes them, with figures chosen so that every target's
    outcome is known: {file name: document}."""
    dev = {"name": "SYNTHETIC GPU", "class": "discrete_gpu", "driver": "synthetic"}
    wl = {"name": "llama8b", "q_heads": 32, "kv_heads": 8, "head_dim": 128, "layers": 32}
    bpt = {"f16": 4096, "q8_0": 2176, "turbo2": 544, "turbo3": 800, "turbo4": 1056}  # K+V bytes/token/layer
    # x floor per type at >= 8K: q8_0 misses P1 (1.40), the others meet it.
    xf = {"f16": 1.10, "q8_0": 1.40, "turbo2": 1.20, "turbo3": 1.20, "turbo4": 1.22}

    def floor_us(nbytes):  # 4 TB/s plus one dispatch
        return 5.0 + nbytes / 4.0e6

    def row(t, ctx, mode=0, batch=1, x=None, step=False, m=1):
        kv = bpt[t] * ctx * batch
        if batch > 1:
            kv = int(kv * 0.75)  # ragged: about depth/2..depth
        fl = floor_us(kv)
        x = x if x is not None else (xf[t] if ctx >= 8 * K else 1.0)
        us = fl * x
        if ctx <= 4 * K:
            us = {"f16": 5.5, "q8_0": 5.0, "turbo2": 6.5, "turbo3": 5.8, "turbo4": 5.9}[t]  # turbo2 misses P5a
        r = {"ctx": ctx, "k_type": t, "v_type": t, "mode": mode, "kv_bytes": kv, "us_median": us,
             "us_min": us * 0.98, "us_max": us * 1.05, "read_floor_us": fl, "x_floor": us / fl,
             "gb_per_s": kv / (us * 1e3), "variant": "mag4" if t.startswith("turbo") else "native"}
        if step:
            r.update({"type": t, "series": t, "step_layers": 32, "step_us": us * 32 * 0.9,
                      "tokens_per_s": 1e6 / (us * 32 * 0.9)})
        return r

    docs = {}
    sweep_rows = [row(t, c, step=True) for t in TYPES for c in (1 * K, 4 * K, 8 * K, 16 * K, 32 * K, 128 * K)]
    # P3: turbo4 misses 1.8x at 128K (q8_0 is made faster there), turbo3 meets 2.2x.
    for r in sweep_rows:
        if r["k_type"] == "q8_0" and r["ctx"] >= 32 * K:
            r["us_median"] = 2.5 * next(x["us_median"] for x in sweep_rows
                                        if x["k_type"] == "turbo3" and x["ctx"] == r["ctx"])
            r["x_floor"] = r["us_median"] / r["read_floor_us"]
        if r["k_type"] == "turbo4" and r["ctx"] == 128 * K:
            r["us_median"] = next(x["us_median"] for x in sweep_rows
                                  if x["k_type"] == "q8_0" and x["ctx"] == r["ctx"]) / 1.5
            r["x_floor"] = r["us_median"] / r["read_floor_us"]
    docs["sweep.json"] = {"batch": 1, "m": 1, "device": dev, "workload": wl, "repeat": 20, "step_repeat": 20,
                          "read_bandwidth_gb_per_s": 4000.0, "rows": sweep_rows}
    # P2: mode 0 within 10% of mode 1 (1.06) at every depth.
    prow = []
    for t in TYPES:
        for c in (8 * K, 32 * K, 128 * K):
            r0 = row(t, c)
            r1 = dict(row(t, c, mode=1), us_median=r0["us_median"] / 1.06)
            prow += [r0, r1]
    docs["profile-modes.json"] = {"batch": 1, "m": 1, "device": dev, "workload": wl, "repeat": 20, "rows": prow}
    # P6: m=8 at 1.2x m=1 (met), m=3 at 1.15x m=2 for turbo3 (a step: not met).
    base = {t: next(r["us_median"] for r in prow if r["k_type"] == t and r["ctx"] == 32 * K and r["mode"] == 0)
            for t in TYPES}
    for m, f in ((8, 1.2), (2, 1.05)):
        docs["profile-m%d.json" % m] = {"batch": 1, "m": m, "device": dev, "workload": wl, "repeat": 20,
                                        "rows": [dict(row(t, 32 * K), us_median=base[t] * f) for t in TYPES]}
    docs["profile-m3.json"] = {"batch": 1, "m": 3, "device": dev, "workload": wl, "repeat": 20,
                               "rows": [dict(row(t, 32 * K), us_median=base[t] * 1.05 * (1.15 if t == "turbo3" else 1.03))
                                        for t in TYPES]}
    # P8: turbo3 misses (1.3x), the others meet 1.15x.
    docs["profile-b16.json"] = {"batch": 16, "m": 1, "device": dev, "workload": wl, "repeat": 20,
                                "rows": [row(t, 8 * K, batch=16, x=1.3 if t == "turbo3" else 1.1) for t in TYPES]}
    # P4: PyTorch 128K best = cudnn 157 us; turbo3 128K here 1.2 x (5 + 26.2 us) = 37.5 us -> 4.19x: met;
    # the flash row is slower; batch 16 rows are ignored by P4.
    peer_rows = []
    for backend, us in (("flash", 185.0), ("cudnn", 157.0)):
        for b in (1, 16):
            kv = 2 * b * 8 * 128 * K * 128 * 2
            peer_rows.append({"backend": backend, "batch": b, "ctx": 128 * K, "us_median": us * b,
                              "kv_bytes": kv, "gb_per_s": kv / (us * b * 1e3), "gqa": "native"})
    docs["peer.json"] = {"tool": "peer_pytorch", "device": {"name": "SYNTHETIC GPU"}, "torch": "0.0",
                         "workload": {"name": "llama8b"}, "rows": peer_rows,
                         "skipped": [{"backend": "cudnn", "batch": 16, "ctx": 2 * K, "reason": "synthetic skip"}]}
    # P7: f32 rows 2.0%, f16 rows 3.5% (the worst is reported): met.
    benches = []
    for t in TYPES:
        step = 32 * 6.0
        benches.append({"name": "step/llama8b/%s/4K/iterations:3/manual_time" % t, "run_type": "iteration",
                        "real_time": step, "time_unit": "us", "step_us": step,
                        "label": "k=%s v=%s layers=32 ctx=4096" % (t, t)})
        for fmt, pct in (("f32", 2.0), ("f16", 3.5)):
            a = step * pct / 100
            benches.append({"name": "append/llama8b/%s/%s/iterations:3/manual_time" % (t, fmt),
                            "run_type": "iteration", "real_time": a, "time_unit": "us", "append_us": a,
                            "step_us": step, "ratio_pct": pct, "target_pct": 5.0,
                            "label": "k=%s v=%s format=%s layers=32 ctx=4096" % (t, t, fmt)})
    docs["append.json"] = {"context": {"device": "SYNTHETIC GPU", "executable": "bench_append"},
                           "benchmarks": benches}
    return docs


# Headline statuses the synthetic inputs must give.
EXPECTED = {
    "P1": "NOT met", "P2": "met", "P3a": "met", "P3b": "NOT met", "P3c": "not measured", "P4": "met",
    "P5a": "NOT met", "P5b": "met", "P6a": "met", "P6b": "NOT met", "P7": "met", "P8": "NOT met",
}


def write_fixture(directory):
    os.makedirs(directory, exist_ok=True)
    for name, doc in synthetic_documents().items():
        with open(os.path.join(directory, name), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


def headline(results):
    return {r.target: r.status for r in results if not r.detail}


def self_test():
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    with tempfile.TemporaryDirectory() as tmp:
        # 1. Synthetic inputs written as a session writes them: every outcome as designed.
        d = os.path.join(tmp, "run")
        write_fixture(d)
        inp = load([d])
        results = Evaluator(inp).all()
        got = headline(results)
        for k, v in EXPECTED.items():
            check("synthetic " + k, got.get(k), v)
        table = render(results, inp).splitlines()
        check("device and driver lines", table[:2], ["device: SYNTHETIC GPU", "driver: synthetic"])

        # 2. The committed fixture gives the same (it is the synthetic set, written by --write-fixture).
        if os.path.isdir(FIXTURE_DIR):
            check("fixture", headline(Evaluator(load([FIXTURE_DIR])).all()), EXPECTED)
        else:
            failures.append("fixture directory %s is missing" % FIXTURE_DIR)

        # 3. The same files packed into a .tar.gz (as run_targets.sh packs them) plus one loose file.
        tgz = os.path.join(tmp, "extra.tar.gz")
        with tarfile.open(tgz, "w:gz") as tar:
            for f in sorted(os.listdir(d)):
                if f != "sweep.json":
                    tar.add(os.path.join(d, f), arcname="extra/" + f)
        check("tar.gz", headline(Evaluator(load([os.path.join(d, "sweep.json"), tgz])).all()), EXPECTED)

        # 4. Nothing at all: every target not measured, and the table still prints.
        empty = Evaluator(Inputs()).all()
        check("empty", set(headline(empty).values()), {"not measured"})
        render(empty, Inputs(), detail=True)

        # 5. Only the sweep: P2, P4, P6, P7, P8 (and P3c) not measured; P1, P3a/b, P5 as designed.
        only = headline(Evaluator(load([os.path.join(d, "sweep.json")])).all())
        for k in ("P2", "P3c", "P4", "P6a", "P6b", "P7", "P8"):
            check("sweep only " + k, only.get(k), "not measured")
        for k in ("P1", "P3a", "P3b", "P5a", "P5b"):
            check("sweep only " + k, only.get(k), EXPECTED[k])

        # 6. A llama.cpp figure makes P3c measurable: q8_0 16K here vs 4.5x that.
        q8 = next(r for r in synthetic_documents()["sweep.json"]["rows"] if r["k_type"] == "q8_0" and r["ctx"] == 16 * K)
        for factor, want in ((4.5, "met"), (3.0, "NOT met")):
            ll = os.path.join(tmp, "llamacpp-%g.json" % factor)
            with open(ll, "w") as f:
                json.dump({"tool": "llamacpp_vulkan", "device": {"name": "SYNTHETIC GPU"},
                           "rows": [{"type": "q8_0", "ctx": 16 * K, "batch": 1, "us_median": q8["us_median"] * factor}]},
                          f)
            check("llama.cpp x%g" % factor, headline(Evaluator(load([d, ll])).all()).get("P3c"), want)
        # ... and a documented figure (bench/testdata/peers/) is used, and said to be one.
        doc_ll = os.path.join(tmp, "llamacpp-documented.json")
        with open(doc_ll, "w") as f:
            json.dump({"tool": "llamacpp_vulkan", "device": {"name": "SYNTHETIC GPU"}, "documented": "a table",
                       "rows": [{"type": "q8_0", "ctx": 16 * K, "batch": 1, "us_median": q8["us_median"] * 4.5}]}, f)
        p3c = [r for r in Evaluator(load([d, doc_ll])).all() if r.target == "P3c"]
        check("documented llama.cpp", p3c and (p3c[0].status, "documented" in p3c[0].note), ("met", True))

        # 7. A failed peer check is no baseline; a variant sweep keeps the fastest variant per point.
        docs = synthetic_documents()
        for r in docs["peer.json"]["rows"]:
            r["check"] = "failed: synthetic"
        extra = json.loads(json.dumps(docs["sweep.json"]))
        for r in extra["rows"]:
            r["us_median"] *= 3  # a slower variant of every point in a second sweep file
            r["variant"] = "slow"
        inp = Inputs()
        for name, doc in docs.items():
            inp.add(name, doc)
        inp.add("slow-sweep.json", extra)
        res = Evaluator(inp).all()
        check("failed peer check", headline(res).get("P4"), "not measured")
        check("fastest variant", headline(res).get("P1"), EXPECTED["P1"])
        p1 = [r for r in res if r.target == "P1" and r.detail and r.case.startswith("turbo3")]
        check("P1 turbo3 ratio", p1 and round(p1[0].ratio, 2), 1.2)

        # 8. Google Benchmark output with a console line before the JSON still parses.
        txt = "bench_append: warming up\n" + json.dumps(synthetic_documents()["append.json"])
        got = list(parse_text("x", txt))
        check("prefixed JSON", kind_of(got[0][1]), "append")

        # 9. The table renders in both formats.
        res = Evaluator(load([d])).all()
        for md in (False, True):
            text = render(res, load([d]), detail=True, markdown=md)
            if "P8" not in text or "targets met" not in text:
                failures.append("render (markdown=%s) lacks lines" % md)

    if failures:
        print("targets.py self-test: %d failure(s)" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    print("targets.py self-test: all checks passed (%d targets)" % len(EXPECTED))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("inputs", nargs="*", help="JSON files, directories, .tar.gz archives")
    ap.add_argument("--workload", default="llama8b")
    ap.add_argument("--detail", action="store_true", help="a line per type / depth under each target")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (for bench/results/)")
    ap.add_argument("--json", dest="json_out", help="also write the results as JSON here")
    ap.add_argument("--step-bound", type=float, default=P6_STEP_BOUND,
                    help="P6: the largest t(m=3)/t(m=2) that is no step (default %(default)s)")
    ap.add_argument("--self-test", action="store_true", help="check this script on synthetic inputs")
    ap.add_argument("--write-fixture", metavar="DIR", help="write the synthetic inputs to DIR")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.write_fixture:
        write_fixture(args.write_fixture)
        print("wrote %d files to %s" % (len(synthetic_documents()), args.write_fixture))
        return 0
    if not args.inputs:
        ap.error("no inputs (or --self-test)")
    for p in args.inputs:
        if not os.path.exists(p):
            ap.error("no such file or directory: %s" % p)
    inp = load(args.inputs)
    results = Evaluator(inp, args.workload, args.step_bound).all()
    print("inputs: " + ", ".join("%s (%s)" % (os.path.basename(n), k) for n, k in inp.files)
          + ("; ignored: " + ", ".join(os.path.basename(n) for n in inp.ignored) if inp.ignored else ""))
    print(render(results, inp, detail=args.detail, markdown=args.markdown))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"devices": inp.devices, "inputs": inp.files, "results": [r.as_dict() for r in results]}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
