"""The short convolution's Triton backward on the GPU: two passes (dz = dy SiLU'(z) written in fp32, then read
back) against one (z recomputed inside the dx / dw pass, :data:`lrnnkit.ops.short_conv.ONE_PASS_BWD`), in ONE process
on the same inputs, at the widths 001's training step convolves (q: 384 channels; k and v: 384 n_h).

    python3 benchmarks/bench_short_conv.py --out $OUT          # on the GPU machine: table, short_conv.json
    python3 benchmarks/bench_short_conv.py --record DIR/short_conv.json   # here: RESULTS.md, "short convolution"
    python3 benchmarks/bench_short_conv.py --smoke             # CPU, the interpreter, tiny shapes

Per shape (R runs of B rows x T positions x C channels, bf16, four taps, SiLU, no bias, as
:func:`lrnnkit.learn.batched._conv` calls :func:`lrnnkit.ops.short_conv.causal_conv_runs`): forward + backward with
each backward (``triton.testing.do_bench`` medians), the bytes each backward moves at the least (two passes: x and dy
read and dz written in fp32, then dz and x read and dx written; one pass: x and dy read, dx written) over the copy
bandwidth measured in the same run, and the largest relative difference between the two backwards' gradients (the
same fp32 arithmetic; only the order the compiler contracts products in may differ).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

#: (name, R, B, T, C): 001's convolutions (batch 1024 x 128; S3's 2048 has twice the rows)
SHAPES = [("q (and k, v at n_h = 1): 384 channels", 1, 1024, 128, 384),
          ("k, v at n_h = 2: 768", 1, 1024, 128, 768),
          ("k, v at n_h = 4: 1536", 1, 1024, 128, 1536)]
SMOKE = [("smoke", 2, 2, 9, 6)]
W = 4


def _bench(fn, dev):
    if dev == "cpu":
        import time
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    from triton.testing import do_bench
    return do_bench(fn, warmup=10, rep=50, return_mode="median")


def _copy_bandwidth(dev) -> float:
    """Bytes per second of a large device copy (read + write), for the floor column."""
    import torch
    if dev == "cpu":
        return 1e10
    x = torch.empty(1 << 28, dtype=torch.uint8, device=dev)
    y = torch.empty_like(x)
    ms = _bench(lambda: y.copy_(x), dev)
    return 2 * x.numel() / (ms * 1e-3)


def measure(shapes, dev) -> dict:
    import torch

    from lrnnkit.ops import short_conv
    dtype = torch.bfloat16 if dev != "cpu" else torch.float32
    bw = _copy_bandwidth(dev)
    rows = []
    for name, R, B, T, C in shapes:
        g = torch.Generator(device=dev).manual_seed(0)
        x = torch.randn(R, B, T, C, device=dev, dtype=dtype, generator=g).requires_grad_(True)
        w = (torch.randn(R, C, 1, W, device=dev, generator=g) / W).requires_grad_(True)
        dy = torch.randn(R, B, T, C, device=dev, dtype=dtype, generator=g)
        e, n = x.element_size(), R * B * T * C
        row = dict(shape=name, R=R, B=B, T=T, C=C, dtype=str(dtype)[6:],
                   floor_ms={"two": (n * (2 * e + 4) + n * (4 + 2 * e)) / bw * 1e3, "one": n * 3 * e / bw * 1e3})
        grads = {}
        for one in (False, True):
            short_conv.ONE_PASS_BWD = one

            def fb():
                y = short_conv.causal_conv_runs(x, w, "silu")
                return torch.autograd.grad(y, (x, w), dy)
            grads[one] = fb()
            with torch.no_grad():
                fwd_ms = _bench(lambda: short_conv.causal_conv_runs(x, w, "silu"), dev)
            row["one" if one else "two"] = {"fwd_bwd_ms": _bench(fb, dev), "bwd_ms": None}
            row["one" if one else "two"]["bwd_ms"] = row["one" if one else "two"]["fwd_bwd_ms"] - fwd_ms
            row["fwd_ms"] = fwd_ms
        row["max_rel_diff"] = max(float((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30))
                                  for a, b in zip(grads[True], grads[False]))
        rows.append(row)
    short_conv.ONE_PASS_BWD = False
    name = torch.cuda.get_device_name() if dev != "cpu" else "cpu (interpreter)"
    return {"device": name, "torch": torch.__version__, "bandwidth_GBps": bw / 1e9, "taps": W, "rows": rows}


def markdown(doc) -> tuple:
    from _record import table
    rows = [[r["shape"], f"{r['R']}x{r['B']}x{r['T']}x{r['C']} {r['dtype']}", f"{r['fwd_ms']:.3f}",
             f"{r['two']['bwd_ms']:.3f} (floor {r['floor_ms']['two']:.3f})",
             f"{r['one']['bwd_ms']:.3f} (floor {r['floor_ms']['one']:.3f})",
             f"{r['two']['fwd_bwd_ms'] / r['one']['fwd_bwd_ms']:.2f}x", f"{r['max_rel_diff']:.1e}"]
            for r in doc["rows"]]
    body = (f"Device: {doc['device']}; torch {doc['torch']}; copy bandwidth {doc['bandwidth_GBps']:.0f} GB/s. Command: "
            "`python3 benchmarks/bench_short_conv.py --out $OUT`; raw JSON beside the command's output.\n\n"
            + table(["shape", "R x B x T x C", "forward ms", "backward ms, two passes", "backward ms, one pass",
                     "fwd+bwd two / one", "max rel. grad diff"], rows))
    notes = ("Backward = forward + backward minus the forward, each a do_bench median; floor = the bytes each "
             "backward must move at the least over the copy bandwidth. The gradient difference is between the two "
             "backwards on the same inputs (the same fp32 arithmetic).")
    return body, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--record", metavar="JSON", help="write a GPU run's JSON into RESULTS.md")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args(argv)
    if a.record:
        from _record import record
        with open(a.record) as fh:
            doc = json.load(fh)
        body, notes = markdown(doc)
        record("short convolution backward", body, notes)
        return 0
    import torch
    dev = "cuda" if torch.cuda.is_available() and not a.smoke else "cpu"
    if dev == "cpu" and not a.smoke:
        ap.error("no GPU here: run with --smoke (the interpreter, tiny shapes) or on the GPU machine")
    doc = measure(SMOKE if a.smoke else SHAPES, dev)
    body, _ = markdown(doc)
    print(body)
    from lrnnkit.fileio import atomic_write_text
    os.makedirs(a.out, exist_ok=True)
    atomic_write_text(os.path.join(a.out, "short_conv.json"), json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
