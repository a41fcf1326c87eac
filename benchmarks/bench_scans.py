"""The diagonal and block-diagonal layers' training step with the scan in torch and on Triton, in one process on one
card.

    python3 benchmarks/bench_scans.py [--seconds 2] [--only 000-parity,...] [--layers diagonal,block-diagonal]
                                      [--json OUT.json]
    python3 benchmarks/bench_scans.py --record OUT.json       # RESULTS.md section from a --json file
    python3 benchmarks/bench_scans.py --smoke                 # CPU, tiny shapes, seconds

The Mamba-like diagonal mixer (000, eq. 1 with ``A = Diag(s(x))``, Table 2) and 002's block-diagonal mixer (eq. 5)
compute every state of ``h_t = A_t h_{t-1} + b_t``. Two scans of that recurrence, each timed on the same
configurations:

* ``torch doubling`` (before): :func:`lrnnkit.ops.linear_scan.doubling_scan`, ``ceil(log2 T)`` doubling steps in
  torch, each a few full-size tensors (block products for 002), differentiated by autograd through every step;
* ``triton scan`` (after): :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan` (the chunk-parallel Triton scan) and
  :func:`lrnnkit.ops.block_diagonal.differentiable.block_diagonal_scan` (the fused recurrent kernel), forward and,
  on the reversed sequence, backward (``db_t = g_t + A_{t+1}^T db_{t+1}``, ``dA_t = db_t h_{t-1}^T``).

Other layers (``--layers deltanet,fixed-point``) take the batched-only arms (``fused gate+conv``, ``+norm``,
``fused all``: the batched step with those paths on, as the protocol grid trains it), which is how their protocol
jobs are priced (``--merge``). Configurations: every group of diagonal (and block-diagonal) runs in the papers'
protocols (:func:`lrnnkit.learn.protocols.follow`, the group's first run), each timed alone (one run, the device loop
:class:`lrnnkit.learn.step.DeviceStep`: device sampler, fused AdamW, the step captured as one CUDA graph) and as the
batched model the protocol grid trains (:class:`lrnnkit.learn.batched.BatchedStep`, all the group's runs in one
graph). The steps are ``bench_batched_runs.py``'s: ``WARM`` steps (compilation, capture), then blocks of 10 steps
for ``--seconds``. Before timing, a check on this device: the scan's states and gradients (float32) against the
sequential loop in float64 at each configuration's longest training length, relative error of each.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SECTION = "diagonal and block-diagonal layers: the Triton scans in the training step"
LAYERS = ("diagonal", "block-diagonal")
BEFORE = "the doubling scan in torch (`lrnnkit.ops.linear_scan.doubling_scan`, autograd through every step)"
SCANS = ("torch doubling", "triton scan", "fused gate", "fused gate+conv", "fused gate+norm", "fused all")
#: the fused paths each of the last four switches on (diagonal layers only; conv and norm: the batched step only)
FUSED = {"fused gate": dict(gate=True), "fused gate+conv": dict(gate=True, conv=True),
         "fused gate+norm": dict(gate=True, norm=True), "fused all": dict(gate=True, conv=True, norm=True)}
SMOKE = dict(width=16, heads=2, batch=8, train_len=(3, 10), test_len=(10,), eval_n=8)


@contextlib.contextmanager
def scan(name: str):
    """The diagonal and block-diagonal mixers (single and batched) with the scan ``name`` of :data:`SCANS` while
    inside: ``fused gate`` (diagonal only) switches on the gated scan's two fused kernels
    (:data:`lrnnkit.ops.diagonal.gated.FUSED_ON_CUDA`: the gate, the scan and the output's silu gate in one pass
    each way, instead of the torch expression around the Triton scan); ``+conv`` and ``+norm`` add the batched step's
    in-place short convolution and fused RMSNorm (``benchmarks/_switches.py``), every other path off."""
    if name not in SCANS:
        raise ValueError(f"unknown scan {name!r}")
    from benchmarks._switches import switched
    from lrnnkit.layers import mixers
    from lrnnkit.learn import batched
    from lrnnkit.ops.diagonal import gated
    from lrnnkit.ops.linear_scan import doubling_scan
    slots = [(mixers, "block_diagonal_scan"), (batched, "block_diagonal_scan"), (gated, "diagonal_scan")]
    saved = {(m, n): getattr(m, n) for m, n in slots}
    if name == "torch doubling":
        gated.diagonal_scan = doubling_scan          # what gated_scan_reference calls
        for m in (mixers, batched):
            m.block_diagonal_scan = lambda A, b: doubling_scan(A, b, matrix=True)
    try:        # the two others: the torch expression around their scan
        with switched(**{"gate": False, "conv": False, "norm": False, **FUSED.get(name, {})}):
            yield
    finally:
        for (m, n), f in saved.items():
            setattr(m, n, f)


def scan_groups(only=None, smoke: bool = False, device: str = "cuda", layers=LAYERS) -> list:
    """``[(experiment, label, [TrainConfig])]``: each protocol group of runs of ``layers`` (None: every layer), on
    ``device``'s device loop (``smoke``: shrunk to :data:`SMOKE`)."""
    from lrnnkit.learn.protocols import PROTOCOLS, _groups, follow
    out = []
    for name in PROTOCOLS:
        if only and name not in only:
            continue
        for label, cfgs in _groups(follow(name)):
            if layers is not None and cfgs[0].layer not in layers:
                continue
            cfgs = [dataclasses.replace(c, device=device, loop="device", max_seconds=None, auto_steps=False,
                                        **(SMOKE if smoke else {})) for c in cfgs]
            out.append((name, label, cfgs))
    return out


def scan_errors(cfg, device: str) -> dict:
    """States and gradients of the scan (float32, this device) against the sequential loop in float64 on the CPU, at
    ``cfg``'s batch and longest training length, width channels; diagonal ``a`` in the configuration's eigenvalue
    range, block-diagonal blocks of 002's column norm (``||A||_1 <= 1``)."""
    import torch
    from lrnnkit.ops.block_diagonal.differentiable import block_diagonal_scan
    from lrnnkit.ops.block_diagonal.naive import block_diagonal_scan_naive
    from lrnnkit.ops.diagonal.naive import diagonal_scan_naive
    from lrnnkit.ops.diagonal.parallel import diagonal_scan
    g = torch.Generator().manual_seed(0)
    B, T, D = min(cfg.batch, 256), cfg.train_len[1], cfg.width
    if cfg.layer == "block-diagonal":
        bs = cfg.block_size
        a = (torch.rand(B, T, D // bs, bs, bs, generator=g, dtype=torch.float64) - 0.5) * (2.0 / bs)
        shape, scan_, ref = (B, T, D // bs, bs), block_diagonal_scan, block_diagonal_scan_naive
    else:
        lo = cfg.eig_range[0]
        a = lo + (1 - lo) * torch.rand(B, T, D, generator=g, dtype=torch.float64)
        shape, scan_, ref = (B, T, D), diagonal_scan, diagonal_scan_naive
    b = torch.randn(*shape, generator=g, dtype=torch.float64)
    w = torch.randn(*shape, generator=g, dtype=torch.float64)
    a64, b64 = a.clone().requires_grad_(), b.clone().requires_grad_()
    h64 = ref(a64, b64, validate=False)
    (h64 * w).sum().backward()
    h64 = h64.detach()
    a32 = a.float().to(device).requires_grad_()
    b32 = b.float().to(device).requires_grad_()
    h32 = scan_(a32, b32)
    (h32 * w.float().to(device)).sum().backward()

    def rel(x, ref):
        return float((x.detach().double().cpu() - ref).norm() / ref.norm().clamp_min(1e-300))
    return {"shape": [B, T, D], "h": rel(h32, h64), "da": rel(a32.grad, a64.grad), "db": rel(b32.grad, b64.grad)}


def fused_gate_errors(cfg, device: str) -> dict:
    """The fused gated scan (:func:`lrnnkit.ops.diagonal.gated.gated_scan_fused`, bfloat16 input projection, as the
    mixer's autocast feeds it) on this device against the torch expression in float64 on the CPU, at ``cfg``'s
    batch (at most 256) and longest training length: relative L2 error of the output and of both gradients."""
    import torch
    from lrnnkit.ops.diagonal.gated import gated_scan_fused, gated_scan_reference
    g = torch.Generator().manual_seed(0)
    B, T, D = min(cfg.batch, 256), cfg.train_len[1], cfg.width
    y = torch.randn(B, T, 3 * D, generator=g, dtype=torch.float64).bfloat16().double()
    w = 0.5 * torch.randn(1, D, generator=g, dtype=torch.float64)
    wt = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    neg = cfg.eig_range[0] < 0
    y64, w64 = y.clone().requires_grad_(), w.clone().requires_grad_()
    o64 = gated_scan_reference(y64, w64, neg)
    (o64 * wt).sum().backward()
    yd = y.bfloat16().to(device).requires_grad_()
    wd = w.float().to(device).requires_grad_()
    od = gated_scan_fused(yd, wd, neg, torch.float32)
    (od * wt.float().to(device)).sum().backward()

    def rel(x, ref):
        return float((x.detach().double().cpu() - ref).norm() / ref.norm().clamp_min(1e-300))
    return {"shape": [B, T, D], "out": rel(od, o64.detach()), "dy": rel(yd.grad, y64.grad),
            "dw": rel(wd.grad, w64.grad)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=None, help="timed seconds per measurement (default 2; smoke 0.5)")
    ap.add_argument("--only", default=None, help="comma-separated experiments (default: every protocol with "
                                                 "runs of --layers)")
    ap.add_argument("--layers", default=",".join(LAYERS), help="comma-separated layers (default: both)")
    ap.add_argument("--scans", default=",".join(SCANS), help=f"comma-separated, of {', '.join(SCANS)} (default: all)")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, in seconds")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds after which no new measurement starts")
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--record", default=None, help="write RESULTS.md's section from a --json file")
    ap.add_argument("--merge", nargs=2, metavar=("SCANS_JSON", "COST_JSON"), default=None,
                    help="write the step times of the last of --scans in SCANS_JSON (a --json file) into the "
                         "protocol cost table COST_JSON (the rows of the same experiment and label)")
    a = ap.parse_args(argv)
    if a.record:
        return record(a.record)
    if a.merge:
        scan_ = a.scans.split(",")[-1]
        if scan_ not in SCANS:
            ap.error(f"--scans: unknown scan {scan_!r} (known: {', '.join(SCANS)})")
        for name in merge(*a.merge, scan_):
            print(f"merged {scan_}: {name}")
        return 0
    scans = [x for x in a.scans.split(",") if x]
    if not scans or any(x not in SCANS for x in scans):
        ap.error(f"--scans: unknown scan in {a.scans!r} (known: {', '.join(SCANS)})")
    import torch
    from benchmarks.bench_batched_runs import WARM, time_alone, time_batched
    a.device = a.device or ("cpu" if a.smoke or not torch.cuda.is_available() else "cuda")
    secs = a.seconds or (0.5 if a.smoke else 2.0)
    groups = scan_groups(set(a.only.split(",")) if a.only else None, a.smoke, a.device, tuple(a.layers.split(",")))
    if a.smoke:         # one group of each layer
        groups = [next(g for g in groups if g[2][0].layer == lay) for lay in dict.fromkeys(g[2][0].layer
                                                                                          for g in groups)]
    t0 = time.perf_counter()
    rows = []
    for name, label, cfgs in groups:
        row = {"experiment": name, "label": label, "layer": cfgs[0].layer, "runs": len(cfgs), "batch": cfgs[0].batch,
               "width": cfgs[0].width, "layers": cfgs[0].layers, "train_len": list(cfgs[0].train_len)}
        try:
            row["errors"] = scan_errors(cfgs[0], a.device)
        except Exception as exc:  # noqa: BLE001 - a failed check is part of the row, the timings still run
            row["errors"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        if cfgs[0].layer == "diagonal":
            try:
                row["errors_fused"] = fused_gate_errors(cfgs[0], a.device)
            except Exception as exc:  # noqa: BLE001 - a failed check is part of the row, the timings still run
                row["errors_fused"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        for s in [x for x in scans if cfgs[0].layer == "diagonal" or x != "fused gate"]:   # the gate: diagonal only
            modes = (("alone", 1), ("batched", len(cfgs))) if s in SCANS[:3] else (("batched", len(cfgs)),)
            for mode, R in modes:
                key = f"{s} / {mode}"
                if time.perf_counter() - t0 > a.budget:
                    row[key] = {"error": "skipped (budget)"}
                    continue
                try:
                    with scan(s):
                        r = time_alone(cfgs[0], secs) if mode == "alone" else time_batched(cfgs[0], R, secs)
                    r["ms_per_step"] = round(1000.0 / r["steps_per_s"], 3)
                    row[key] = {k: r[k] for k in ("steps", "seconds", "ms_per_step", "graph") if k in r}
                except Exception as exc:  # noqa: BLE001 - one failed measurement is a cell, the others still run
                    row[key] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                if a.device == "cuda":
                    torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps(row), flush=True)
    dev = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    import datetime
    import triton
    doc = {"device": dev, "torch": torch.__version__, "triton": triton.__version__,
           "measured_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "before": BEFORE,
           "seconds_timed": secs, "warm": WARM, "smoke": a.smoke,
           "rows": rows, "seconds": round(time.perf_counter() - t0, 1)}
    print("\n" + markdown(doc))
    if a.json:
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(a.json, json.dumps(doc, indent=1) + "\n")
    return 0


def _ms(cell) -> str:
    return f"{cell['ms_per_step']:.2f}" if isinstance(cell, dict) and "ms_per_step" in cell else "-"


def _ratio(before, after) -> str:
    if not all(isinstance(c, dict) and "ms_per_step" in c for c in (before, after)):
        return "-"
    return f"{before['ms_per_step'] / after['ms_per_step']:.2f}x"


def markdown(doc: dict) -> str:
    head = ("| experiment | configuration | runs | batch x length | ms/step alone: before / after | speed-up | "
            "ms/step batched: before / after | speed-up | rel. error h / da / db | ms/step fused gate: alone / "
            "batched | vs after, batched | fused gate rel. error out / dy / dw |")
    out = [head, "|---|---|---:|---|---|---:|---|---:|---|---|---:|---|"]
    for r in doc["rows"]:
        cells = []
        for mode in ("alone", "batched"):
            b, f = r.get(f"torch doubling / {mode}"), r.get(f"triton scan / {mode}")
            cells += [f"{_ms(b)} / {_ms(f)}", _ratio(b, f)]
        e = r.get("errors", {})
        err = "error" if "error" in e else f"{e['h']:.1e} / {e['da']:.1e} / {e['db']:.1e}"
        fa, fb = r.get("fused gate / alone"), r.get("fused gate / batched")
        ef = r.get("errors_fused") or {}
        err += (f" | {_ms(fa)} / {_ms(fb)} | {_ratio(r.get('triton scan / batched'), fb)} | "
                + ("-" if not ef else "error" if "error" in ef else
                   f"{ef['out']:.1e} / {ef['dy']:.1e} / {ef['dw']:.1e}"))
        L = r["train_len"]
        out.append(f"| {r['experiment']} | {r['label']} | {r['runs']} | {r['batch']} x {L[0]}-{L[1]} | "
                   + " | ".join(cells) + f" | {err} |")
    return "\n".join(out)


def merge(scans_path: str, cost_path: str, scan: str) -> list:
    """Write the step times ``scan`` took (a ``--json`` file of this script) into the protocol cost table
    (``benchmarks/results/paper_scale/cost_h200_protocol.json``, what ``bench_learning.py --protocol --dry-run``
    prices jobs by): for each of its rows of the same experiment and label, ``ms_per_step`` (one run) and
    ``batched`` (the group's runs as one model) become the measured ones, the row's former values kept under
    ``before``. Rows whose cells were not measured (an error, the budget) stay; a scan timed batched only (the
    batched step's fused convolution and norm) leaves ``ms_per_step`` as it was, except for a group of one run, whose
batched step is its one run's. A measured group with no row of its
    label yet gets one (its shape, both times, the source: the table then prices its job by it). Returns the rows
    changed or added."""
    from lrnnkit.fileio import atomic_write_text
    with open(scans_path, encoding="utf-8") as fh:
        scans = json.load(fh)
    with open(cost_path, encoding="utf-8") as fh:
        cost = json.load(fh)
    changed = []
    for r in scans["rows"]:
        alone, batched = r.get(f"{scan} / alone") or {}, r.get(f"{scan} / batched") or {}
        if "ms_per_step" not in batched:
            continue
        source = f"bench_scans.py, {scan} ({os.path.basename(scans_path)}, {scans.get('measured_utc', '?')})"
        rows = cost["experiments"].get(r["experiment"], {}).get("rows", [])
        mine = [row for row in rows if row.get("label") == r["label"]]
        if r.get("runs") == 1 and "ms_per_step" not in alone:
            alone = batched         # a group of one run: the job trains it as a batch of one, that step is its own
        new = not mine and "ms_per_step" in alone      # a group the table has no row for: its own, by its shape
        if new:
            mine = [{k: r[k] for k in ("label", "layer", "batch", "width", "layers", "train_len")}
                    | {"step_graph": batched.get("graph")}]
            cost["experiments"].setdefault(r["experiment"], {}).setdefault("rows", []).extend(mine)
        for row in mine:
            if not new:
                row["before"] = {k: row[k] for k in ("ms_per_step", "batched", "source") if k in row}
            if "ms_per_step" in alone:
                row["ms_per_step"] = alone["ms_per_step"]
            row["batched"] = {"runs": r["runs"], "ms_per_step": batched["ms_per_step"]}
            row["source"] = source + (": a new row" if new else "")
            changed.append(f"{r['experiment']} / {r['label']}" + (" (new row)" if new else ""))
    atomic_write_text(cost_path, json.dumps(cost, indent=1) + "\n")
    return changed


def record(path: str) -> int:
    from benchmarks._record import record as write
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    notes = (f"{doc['device']}, torch {doc['torch']}; each cell {doc['seconds_timed']:g} s of steps after "
             f"{doc['warm']} warm-up steps (device loop, the step captured as one CUDA graph; batched: the protocol "
             f"group's runs as one model). Before: {doc.get('before', BEFORE)}; after: the Triton kernels forward "
             "and backward (`diagonal_scan`: the chunk-parallel scan; `block_diagonal_scan`: the fused recurrent "
             "kernel). Errors: "
             "float32 on this device against the sequential loop in float64, relative L2. Reproduce: "
             f"`python3 benchmarks/bench_scans.py --seconds {doc['seconds_timed']:g} --json OUT.json`, then "
             "`--record OUT.json`.")
    when = doc.get("measured_utc", "(time not recorded)")
    write(SECTION, markdown(doc), notes, measured=f"{when} on {doc['device']}, torch {doc['torch']}, triton "
                                                  f"{doc.get('triton', '?')} (recorded from {os.path.basename(path)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
