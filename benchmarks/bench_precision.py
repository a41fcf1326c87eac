"""Benchmark of lrnnkit.precision: cast throughput against ml_dtypes / numpy / pychop in the same run, and the
finite-precision executor on 10^6 steps of a width-5 model in a custom format.

    .venv/bin/python benchmarks/bench_precision.py [--quick] [--no-record]

Records the section "precision" of benchmarks/RESULTS.md (unless --no-record).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _record import record, table  # noqa: E402

from lrnnkit.precision.cast import cast  # noqa: E402


def best_time(f, rep: int) -> float:
    best = float("inf")
    for _ in range(rep):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_casts(n: int, rep: int) -> list:
    import ml_dtypes
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    rows = []
    peers = {"fp16": ("numpy float16", lambda: x.astype(np.float16)),
             "bf16": ("ml_dtypes bfloat16", lambda: x.astype(ml_dtypes.bfloat16)),
             "fp8-e4m3fn": ("ml_dtypes float8_e4m3fn", lambda: x.astype(ml_dtypes.float8_e4m3fn))}
    pychop_rate = {}
    try:
        import pychop
        from pychop import Chop
        pychop.backend("numpy")
        m = min(n, 1_000_000)
        xs = x[:m].copy()
        for name, (e, mm) in {"fp16": (5, 10), "bf16": (8, 7), "e5m7": (5, 7)}.items():
            ch = Chop(exp_bits=e, sig_bits=mm, rmode=1)
            t = best_time(lambda: ch(xs), 1)
            pychop_rate[name] = m / t / 1e6
    except ImportError:
        pass
    for fmt in ("fp16", "bf16", "fp8-e4m3fn", "e5m7", "e3m4"):
        t = best_time(lambda: cast(x, fmt), rep)
        ours = n / t / 1e6
        peer, rate = "-", None
        if fmt in peers:
            peer, f = peers[fmt]
            rate = n / best_time(f, rep) / 1e6
        ratio = f"{ours / rate:.2f}" if rate else "-"
        pc = pychop_rate.get(fmt)
        rows.append([fmt, "nearest-even", f"{ours:.1f}", peer, f"{rate:.1f}" if rate else "-", ratio,
                     f"{pc:.2f}" if pc else "-", f"{ours / pc:.0f}x" if pc else "-"])
    for mode in ("toward-zero", "toward-positive", "stochastic"):
        t = best_time(lambda: cast(x, "e5m7", mode, seed=0), max(1, rep // 2))
        rows.append(["e5m7", mode, f"{n / t / 1e6:.1f}", "-", "-", "-", "-", "-"])
    return rows


def bench_executor(steps: int) -> list:
    from lrnnkit.automata.sources import load_source
    from lrnnkit.constructions.registry import compile as compile_fsa
    from lrnnkit.precision.simulate import collapse
    rows = []
    for src in ("group:A5", "group:S5"):
        try:
            model = compile_fsa(load_source(src))
        except Exception as exc:  # noqa: BLE001
            rows.append([src, "-", "-", "-", "-", f"compile failed: {exc}"])
            continue
        for fmt, pol, gh in (("e5m7", "op", "scaled"), ("e5m7", "op", "factors"), ("e5m7", "matvec", "factors"),
                             ("fp8-e4m3-ieee", "matvec", "factors")):
            t0 = time.perf_counter()
            r = collapse(model, fmt, pol, steps=steps, gh=gh)
            dt = time.perf_counter() - t0
            rows.append([f"{src} [{model.provenance.get('construction')}], width {model.widths}", fmt,
                         f"{pol}, keys={gh}", f"{dt:.2f}", r.distinct_states, r.first_wrong_step])
    return rows


def bench_torch(device: str, n: int) -> list:
    """cast_torch on a device: bit-exact against the numpy cast (all deterministic modes, several formats) and
    throughput next to torch's own float64 -> bfloat16 / float16 conversion (a peer that double-rounds)."""
    import torch
    from lrnnkit.precision.cast import cast_torch
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n) * np.ldexp(1.0, rng.integers(-20, 20, n))
    xt = torch.from_numpy(x).to(device)
    rows = []
    for fmt in ("bf16", "fp16", "fp8-e4m3fn", "e5m7", "e3m2-ftz"):
        for mode in ("nearest-even", "toward-zero", "toward-positive", "toward-negative"):
            got = cast_torch(xt[:1_000_000], fmt, mode).cpu().numpy()
            ref = cast(x[:1_000_000], fmt, mode)
            ok = (got.view(np.uint64) == ref.view(np.uint64)) | (np.isnan(got) & np.isnan(ref))
            if not ok.all():
                raise AssertionError(f"cast_torch on {device} differs from numpy: {fmt} {mode} {x[:1_000_000][~ok][:3]}")
        sync = (lambda: torch.cuda.synchronize()) if device.startswith("cuda") else (lambda: None)

        def run(f):
            f()
            sync()
            t0 = time.perf_counter()
            for _ in range(5):
                f()
            sync()
            return (time.perf_counter() - t0) / 5
        t = run(lambda: cast_torch(xt, fmt))
        peer = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(fmt)
        tp = run(lambda: xt.to(peer).to(torch.float64)) if peer else None
        rows.append([device, fmt, f"{n / t / 1e9:.2f}", f"{n / tp / 1e9:.2f}" if tp else "-", "bit-exact vs numpy"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--torch-device", default=None, help="only check and time cast_torch on this device")
    a = ap.parse_args()
    if a.torch_device:
        rows = bench_torch(a.torch_device, 2 * 10 ** 7 if a.torch_device.startswith("cuda") else 10 ** 6)
        print(table(["device", "format", "lrnnkit cast_torch G values/s", "torch .to(dtype) G/s", "check"], rows))
        return
    n = 10 ** 6 if a.quick else 10 ** 7
    steps = 10 ** 5 if a.quick else 10 ** 6
    rows = bench_casts(n, 2 if a.quick else 5)
    body = (f"Cast throughput, {n:.0e} standard-normal float64 values, M values/s (best of repeats; pychop on "
            f"min(n, 10^6) values, numpy backend):\n\n"
            + table(["format", "rounding", "lrnnkit", "peer", "peer M/s", "lrnnkit / peer", "pychop M/s",
                     "lrnnkit / pychop"], rows))
    ex = bench_executor(steps)
    body += (f"\n\nFinite-precision executor, one random word of {steps:.0e} steps (memoized; includes building the "
             f"simulator), seconds:\n\n"
             + table(["model", "format", "policy", "seconds", "distinct states", "first wrong step"], ex))
    notes = ("Timings taken while other engineers shared the 2 cores (load average 7-11): noisy, the lead re-runs. "
             "The numpy cast makes ~9 passes over each 64K-element chunk (bit-pattern rounding plus a range check; "
             "elements outside [min_normal, max] are redone by the general integer path in one call), so it stays "
             "below the single-pass C++ of ml_dtypes (goal: >= 0.5x; measured ratios in the table). The executor "
             "memoizes (state, symbol) -> next state: its speed depends on how many distinct finite-precision "
             "states the run visits (exactly representable keys: few; rounded unit keys 1/sqrt 2: drift, more).")
    if a.no_record:
        print(body)
        print(notes)
    else:
        record("precision", body, notes)


if __name__ == "__main__":
    main()
