#!/usr/bin/env python3
"""Peer baseline: PyTorch SDPA decode attention over an f16 KV cache (performance.md, "Peers").

Times torch.nn.functional.scaled_dot_product_attention for one query token per sequence over a
cache of `ctx` positions, restricted to one backend at a time with torch.nn.attention.sdpa_kernel
(FLASH_ATTENTION, CUDNN_ATTENTION). A backend that raises for a point is skipped for that point and
the reason recorded. Shape: a standard workload (llama8b by default: 32 query heads, 8 KV heads,
head dim 128), batch 1 and 16 (uniform lengths: SDPA has no ragged batch), depths from --ctx.

Timing: CUDA events around every call, after a warm-up; the calls are queued behind a GPU sleep so
that the events measure GPU time, not Python's launch rate; the median of --repeat calls. When one
K/V set would fit in the L2 cache, several sets are allocated and rotated (like profile/measure.cpp:
at least --rotate-bytes in all, default 256 MB). Data are random normal halves, never zeros.

Output: one JSON document (stdout, or --out FILE): device, torch version, rows of
{backend, batch, ctx, us_median, kv_bytes, gb_per_s, ...} and skipped points with their reasons.
torch is imported only when timing: `--dry-run` prints the planned points and needs no torch.

  python3 bench/peer_pytorch.py --dry-run
  python3 bench/peer_pytorch.py --ctx 2k,8k,32k,128k --batch 1,16 --repeat 50 --out peer.json
"""

import argparse
import json
import math
import re
import sys
import time
import warnings

# The standard workloads of performance.md (named the same as profile/workloads.cpp).
WORKLOADS = {
    "llama8b": (32, 8, 128),
    "qwen7b": (28, 4, 128),
    "mha64": (16, 16, 64),
    "wide256": (16, 8, 256),
}
BACKENDS = ("flash", "cudnn", "efficient", "math")  # names on the command line
F16_BYTES = 2


def parse_depths(text):
    """'2k,8k,32k,128k', '1k..128k' (doubling), '4096': token counts (k = 1024), as turboprof."""

    def one(t):
        m = re.fullmatch(r"\s*(\d+)\s*([kK]?)\s*", t)
        if not m:
            raise ValueError("malformed depth %r" % t)
        n = int(m.group(1)) * (1024 if m.group(2) else 1)
        if n <= 0:
            raise ValueError("depth must be positive: %r" % t)
        return n

    out = []
    for part in text.split(","):
        if ".." in part:
            lo, hi = (one(x) for x in part.split("..", 1))
            if hi < lo:
                raise ValueError("empty range %r" % part)
            d = lo
            while d <= hi:
                out.append(d)
                d *= 2
        else:
            out.append(one(part))
    return out


def depth_label(n):
    return "%dK" % (n // 1024) if n % 1024 == 0 else str(n)


def parse_list(text, kind=str):
    return [kind(x.strip()) for x in text.split(",") if x.strip()]


def plan(args):
    """The points to time: one per (backend, batch, ctx), with shapes and rotation sets."""
    q_heads, kv_heads, head_dim = args.shape
    points = []
    for batch in args.batch:
        for ctx in args.ctx:
            kv_bytes = 2 * batch * kv_heads * ctx * head_dim * F16_BYTES  # K and V, f16
            sets = max(1, min(args.max_sets, math.ceil(args.rotate_bytes / kv_bytes)))
            for backend in args.backends:
                points.append({
                    "backend": backend,
                    "batch": batch,
                    "ctx": ctx,
                    "q_shape": [batch, q_heads, 1, head_dim],
                    "kv_shape": [batch, kv_heads, ctx, head_dim],
                    "kv_bytes": kv_bytes,
                    "sets": sets,
                    "gqa": args.gqa,
                })
    return points


# ------------------------------------------------------------------------------------------------
# Timing (imports torch)


class Runner:
    def __init__(self, args):
        try:  # lazily: torch is on the GPU machine, not where the scripts are checked
            import torch
            import torch.nn.functional as F
        except ImportError as e:
            raise SystemExit("peer_pytorch: cannot import torch (%s); --dry-run needs none" % e)

        self.torch = torch
        self.F = F
        self.args = args
        if not torch.cuda.is_available():
            raise SystemExit("peer_pytorch: CUDA is not available to torch %s" % torch.__version__)
        self.dev = torch.device("cuda")
        self.sdpa_kernel, self.backend_enum = self._backend_api()
        self.has_enable_gqa = self._has_enable_gqa()
        self.gen = torch.Generator(device=self.dev)
        self.gen.manual_seed(1234)

    def _backend_api(self):
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError as e:  # torch < 2.3
            raise SystemExit("peer_pytorch: torch.nn.attention.sdpa_kernel is missing (%s)" % e)
        enum = {
            "flash": getattr(SDPBackend, "FLASH_ATTENTION", None),
            "cudnn": getattr(SDPBackend, "CUDNN_ATTENTION", None),
            "efficient": getattr(SDPBackend, "EFFICIENT_ATTENTION", None),
            "math": getattr(SDPBackend, "MATH", None),
        }
        return sdpa_kernel, enum

    def _has_enable_gqa(self):
        import inspect

        try:
            return "enable_gqa" in inspect.signature(self.F.scaled_dot_product_attention).parameters
        except (TypeError, ValueError):  # a builtin without a signature: try a tiny call
            torch = self.torch
            q = torch.ones(1, 2, 1, 8, device=self.dev, dtype=torch.float16)
            k = torch.ones(1, 1, 4, 8, device=self.dev, dtype=torch.float16)
            try:
                self.F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
                return True
            except TypeError:
                return False

    def device_info(self):
        torch = self.torch
        p = torch.cuda.get_device_properties(self.dev)
        info = {
            "name": p.name,
            "multiprocessors": p.multi_processor_count,
            "memory_bytes": p.total_memory,
            "l2_bytes": getattr(p, "L2_cache_size", None),
        }
        return info

    def randn(self, shape):
        torch = self.torch
        return torch.randn(*shape, device=self.dev, dtype=torch.float16, generator=self.gen)

    def call_fn(self, method, q, k, v):
        """A closure running one decode call with `method` of handling GQA:
        native: enable_gqa=True (K/V read once, kernel maps query heads to KV heads);
        fold:   the group's query heads become query rows of their KV head (q [B, Hkv, G, D]);
                exact for one decode query (no mask), and K/V are read once;
        repeat: K/V repeated to every query head (repeat_interleave, done once outside the timing;
                the kernel then reads G times the bytes)."""
        F = self.F
        b, hq, _, d = q.shape
        hkv = k.shape[1]
        g = hq // hkv
        if method == "native" or g == 1:
            if g == 1:
                return lambda: F.scaled_dot_product_attention(q, k, v)
            return lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        if method == "fold":
            qf = q.reshape(b, hkv, g, d)  # [B, Hq, 1, D] -> [B, Hkv, G, D]: head h -> (h // G, h % G)
            return lambda: F.scaled_dot_product_attention(qf, k, v).reshape(b, hq, 1, d)  # a view back
        if method == "repeat":
            kr = k.repeat_interleave(g, dim=1)
            vr = v.repeat_interleave(g, dim=1)
            return lambda: F.scaled_dot_product_attention(q, kr, vr)
        raise ValueError(method)

    def reference(self, q, k, v):
        """Exact attention in f32 (for a sanity check of each backend and method)."""
        torch = self.torch
        b, hq, _, d = q.shape
        hkv = k.shape[1]
        g = hq // hkv
        qf = q.float().reshape(b, hkv, g, d)
        s = torch.matmul(qf, k.float().transpose(-1, -2)) / math.sqrt(d)
        o = torch.matmul(torch.softmax(s, dim=-1), v.float())
        return o.reshape(b, hq, 1, d)

    def time_point(self, pt):
        torch = self.torch
        args = self.args
        backend = self.backend_enum.get(pt["backend"])
        if backend is None:
            return None, "torch %s has no SDPBackend for %s" % (torch.__version__, pt["backend"])
        q_shape, kv_shape, sets = pt["q_shape"], pt["kv_shape"], pt["sets"]
        data = []
        try:
            for _ in range(sets):
                data.append((self.randn(q_shape), self.randn(kv_shape), self.randn(kv_shape)))
        except torch.cuda.OutOfMemoryError as e:
            data.clear()
            torch.cuda.empty_cache()
            return None, "out of memory allocating %d K/V set(s): %s" % (sets, str(e).splitlines()[0])

        methods = [pt["gqa"]] if pt["gqa"] != "auto" else (["native", "fold"] if self.has_enable_gqa else ["fold"])
        reasons = []
        try:
            for method in methods:
                if method == "native" and not self.has_enable_gqa and q_shape[1] != kv_shape[1]:
                    reasons.append("native: this torch has no enable_gqa")
                    continue
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        with self.sdpa_kernel([backend]):
                            calls = [self.call_fn(method, *d) for d in data]
                            out = calls[0]()
                            torch.cuda.synchronize()
                            err = None
                            if pt["kv_bytes"] <= args.check_bytes:
                                ref = self.reference(*data[0])
                                err = (out.float() - ref).abs().max().item()
                            samples = self._time(calls)
                    except Exception as e:  # noqa: BLE001 - any backend failure is a recorded skip
                        why = " ".join(str(e).split())[:300]
                        hints = [" ".join(str(w.message).split())[:300] for w in caught]
                        reasons.append("%s: %s: %s%s" % (method, type(e).__name__, why,
                                                         (" [" + " | ".join(hints) + "]") if hints else ""))
                        torch.cuda.synchronize()
                        continue
                samples.sort()
                n = len(samples)
                med = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
                row = {
                    "backend": pt["backend"],
                    "batch": pt["batch"],
                    "ctx": pt["ctx"],
                    "us_median": med,
                    "us_min": samples[0],
                    "us_max": samples[-1],
                    "kv_bytes": pt["kv_bytes"],
                    "gb_per_s": pt["kv_bytes"] / (med * 1e3),
                    "gqa": method,
                    "sets": sets,
                    "repeat": n,
                    "max_abs_err": err,
                }
                if reasons:
                    row["fallback_from"] = reasons
                if err is not None and not err < args.tolerance:
                    row["check"] = "failed: max |out - exact| = %g >= %g" % (err, args.tolerance)
                return row, None
        finally:
            del data
            torch.cuda.empty_cache()
        return None, "; ".join(reasons) or "no method ran"

    def _time(self, calls):
        """Per-call GPU times (µs): warm-up, then `repeat` calls with CUDA events around each, queued
        behind a GPU sleep so that the GPU never waits for Python between calls."""
        torch = self.torch
        args = self.args
        start = time.perf_counter()
        i = 0
        while i < args.warmup or time.perf_counter() - start < args.warmup_s:
            calls[i % len(calls)]()
            i += 1
            if i % 16 == 0:
                torch.cuda.synchronize()
            if i >= 100000:
                break
        torch.cuda.synchronize()
        n = args.repeat
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is not None and not args.no_queue:
            sleep(int(args.queue_cycles + n * 1e5))  # keeps the GPU busy while Python queues the timed calls
        for j in range(n):
            ev[j][0].record()
            calls[j % len(calls)]()
            ev[j][1].record()
        torch.cuda.synchronize()
        return [a.elapsed_time(b) * 1000.0 for a, b in ev]


def run(args):
    points = plan(args)
    doc = {
        "tool": "peer_pytorch",
        "workload": {"name": args.workload, "q_heads": args.shape[0], "kv_heads": args.shape[1],
                     "head_dim": args.shape[2]},
        "dtype": "f16",
        "m": 1,
        "repeat": args.repeat,
        "gqa_requested": args.gqa,
        "rotate_bytes": args.rotate_bytes,
    }
    if args.dry_run:
        doc["dry_run"] = True
        doc["points"] = points
        return doc
    runner = Runner(args)
    torch = runner.torch
    doc["device"] = runner.device_info()
    doc["torch"] = torch.__version__
    doc["cuda"] = torch.version.cuda
    try:
        doc["cudnn"] = torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001
        doc["cudnn"] = None
    doc["enable_gqa"] = runner.has_enable_gqa
    doc["queued_behind_sleep"] = hasattr(torch.cuda, "_sleep") and not args.no_queue
    rows, skipped = [], []
    for pt in points:
        row, why = runner.time_point(pt)
        label = "%s batch %d %s" % (pt["backend"], pt["batch"], depth_label(pt["ctx"]))
        if row is not None:
            rows.append(row)
            print("peer_pytorch: %-28s %9.1f us %8.0f GB/s (%s%s)" % (
                label, row["us_median"], row["gb_per_s"], row["gqa"],
                ", " + row["check"] if "check" in row else ""), file=sys.stderr)
        else:
            skipped.append({"backend": pt["backend"], "batch": pt["batch"], "ctx": pt["ctx"], "reason": why})
            print("peer_pytorch: %-28s skipped: %s" % (label, why), file=sys.stderr)
    doc["rows"] = rows
    doc["skipped"] = skipped
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="llama8b", choices=sorted(WORKLOADS))
    ap.add_argument("--ctx", default="2k,8k,32k,128k", help="depths: 2k,8k or 1k..128k (default %(default)s)")
    ap.add_argument("--batch", default="1,16", help="batch sizes (default %(default)s)")
    ap.add_argument("--backends", default="flash,cudnn", help="of %s (default %%(default)s)" % ",".join(BACKENDS))
    ap.add_argument("--gqa", default="auto", choices=("auto", "native", "fold", "repeat"),
                    help="GQA handling: auto = enable_gqa where torch has it, else (or when the backend "
                         "rejects it) query heads folded into query rows; repeat = repeat_interleave")
    ap.add_argument("--repeat", type=int, default=50, help="timed calls per point (median)")
    ap.add_argument("--warmup", type=int, default=10, help="warm-up calls per point (at least)")
    ap.add_argument("--warmup-s", type=float, default=0.15, help="warm-up seconds per point (at least)")
    ap.add_argument("--rotate-bytes", type=float, default=256e6,
                    help="rotate K/V sets until at least this many bytes (past L2, ~50-60 MB)")
    ap.add_argument("--max-sets", type=int, default=32)
    ap.add_argument("--check-bytes", type=float, default=256e6,
                    help="compare with exact f32 attention when K/V bytes are at most this")
    ap.add_argument("--tolerance", type=float, default=2e-2, help="max |out - exact| of the check")
    ap.add_argument("--queue-cycles", type=float, default=2e7, help="GPU sleep ahead of the timed calls")
    ap.add_argument("--no-queue", action="store_true", help="no GPU sleep: events include launch gaps")
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    ap.add_argument("--dry-run", action="store_true", help="print the planned points; needs no torch")
    args = ap.parse_args(argv)
    try:
        args.ctx = parse_depths(args.ctx)
        args.batch = parse_list(args.batch, int)
        args.backends = parse_list(args.backends)
    except ValueError as e:
        ap.error(str(e))
    for b in args.backends:
        if b not in BACKENDS:
            ap.error("unknown backend %r (known: %s)" % (b, ", ".join(BACKENDS)))
    if args.repeat < 1 or any(b < 1 for b in args.batch):
        ap.error("--repeat and --batch must be positive")
    args.shape = WORKLOADS[args.workload]

    doc = run(args)
    text = json.dumps(doc, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
        if not args.dry_run:
            print("peer_pytorch: wrote %s (%d rows, %d skipped)" % (args.out, len(doc["rows"]), len(doc["skipped"])),
                  file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
