"""The Mamba block's training step beside the Mamba-like diagonal layer's, at the papers' Mamba configurations, in
one process on one card.

    python3 benchmarks/bench_mamba_step.py [--seconds 2] [--only 000-parity,...] [--json OUT.json]
    python3 benchmarks/bench_mamba_step.py --smoke            # CPU, tiny shapes, seconds
    python3 benchmarks/bench_mamba_step.py --merge STEP.json COST.json   # here: its times into the cost table

000 (Table 3) and 003 (Fig. 3, Table 2) train Mamba (Gu & Dao, 2023). At scale paper lrnnkit's protocols train
their Mamba configurations on the ``mamba`` layer (:class:`lrnnkit.layers.mamba.MambaMixer`: expand 2, 16 states
per channel read out by ``C_t``, the ``D`` skip), the paper's block; below it, and in the paper-scale runs made
before, on the one-state-per-channel ``diagonal`` layer (:class:`lrnnkit.layers.mixers.DiagonalMixer`,
:mod:`lrnnkit.learn.mamba_configs`). What the block costs beside it: for every protocol group whose layer is
``mamba`` (the group's first run), one run's step with each layer on the device loop (:class:`lrnnkit.learn.step.DeviceStep`: device
sampler, fused AdamW, the step captured as one CUDA graph; ``bench_batched_runs.time_alone``: ``WARM`` steps, then
blocks of 10 steps for ``--seconds``); the block twice, its scan as the torch expression (``mamba unfused``) and
on the fused kernels (:mod:`lrnnkit.ops.diagonal.selective`, what CUDA runs by default). With ``--batched``, also
the group's runs as the one model the protocol grid trains (:class:`lrnnkit.learn.batched.BatchedStep`), for both
layers (``diagonal batched``, ``mamba batched``), after a check that three small mamba runs batched train what
each trains alone on this device (:func:`lrnnkit.learn.batched.difference_from_separate`). Before timing, a check
on this device: the block in float32 (its Triton scan on CUDA)
against a float64 copy on the CPU (the sequential reference backend), relative L2 error of the output and of all
parameters' gradients, in both eigenvalue ranges. Prints one JSON line per row and a table.

``--merge STEP.json COST.json`` writes the block's measured steps (the ``mamba`` arm, one run; ``mamba batched``,
the group as one model; a group of one run is its own batch) into the protocol cost table
(``benchmarks/results/paper_scale/cost_h200_protocol.json``, what ``bench_learning.py --protocol --dry-run``
prices jobs by), under the configurations' paper-scale labels (a file measured under the one-state layer's labels,
``Mamba-like diagonal [..]``, is read under ``Mamba [..]``), through ``bench_scans.merge``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

ARMS = ("diagonal", "mamba unfused", "mamba")
BATCHED = ("diagonal batched", "mamba batched")


def device_errors(device: str, width: int = 128, batch: int = 256, T: int = 40) -> dict:
    """``{range: {"out": e, "grad": e}}``: :class:`~lrnnkit.layers.mamba.MambaMixer` (float32 on ``device``) against
    the same weights in float64 on the CPU with the sequential backend, at 000-parity's width and longest training
    length; ``grad`` is the largest relative error over the parameters."""
    import torch
    from lrnnkit.layers.mamba import MambaMixer
    out = {}
    for eig in ((0.0, 1.0), (-1.0, 1.0)):
        torch.manual_seed(0)
        ref = MambaMixer(width, eig, backend="naive").double()
        m = MambaMixer(width, eig).to(device)
        m.load_state_dict({k: v.float() for k, v in ref.state_dict().items()})
        u = torch.randn(batch, T, width, dtype=torch.float64)
        w = torch.randn(batch, T, width, dtype=torch.float64)
        y64 = ref(u)
        g64 = torch.autograd.grad((y64 * w).sum(), list(ref.parameters()))
        y32 = m(u.float().to(device))
        g32 = torch.autograd.grad((y32 * w.float().to(device)).sum(), list(m.parameters()))

        def rel(x, r):
            return float((x.detach().double().cpu() - r.detach()).norm() / r.detach().norm().clamp_min(1e-300))
        out[f"[{eig[0]:g},{eig[1]:g}]"] = {"out": rel(y32, y64), "grad": max(rel(a, b) for a, b in zip(g32, g64))}
    return out


def batched_check(device: str) -> dict:
    """Three small mamba runs (12 steps, per-run learning rates, bf16 off) batched against each trained alone on
    ``device``; ``ok`` when every parameter agrees to 1e-4 and, on CUDA, the batched step was captured."""
    from lrnnkit.learn.batched import difference_from_separate
    from lrnnkit.learn.train import TrainConfig
    try:
        cfgs = [TrainConfig(task="parity", layer="mamba", eig_range=(-1.0, 1.0), layers=2, width=32, steps=12,
                            batch=16, train_len=(3, 20), test_len=(20,), lr=3e-3 * (s + 1), seed=s, device=device,
                            bf16=False, loop="device") for s in range(3)]
        d = difference_from_separate(cfgs)
    except Exception as exc:  # noqa: BLE001 - reported, the timings still run
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    d["ok"] = max(d["max_abs"]) <= 1e-4 and (device == "cpu" or d["graph"] == "captured")
    return d


def rows(only, smoke: bool, device: str, seconds: float, budget: float, batched: bool = False, arms=None) -> list:
    """One row per (protocol group of mamba runs, arm of :data:`ARMS`, and with ``batched`` of
    :data:`BATCHED`): ms a step (of one run, or of the group's runs as one model), or the error."""
    from benchmarks.bench_batched_runs import time_alone, time_batched
    from benchmarks.bench_scans import scan_groups
    from benchmarks._switches import switched
    out, t0 = [], time.perf_counter()
    for name, label, cfgs in scan_groups(only, smoke, device, ("mamba",)):
        for layer in [x for x in ARMS + (BATCHED if batched else ()) if arms is None or x in arms]:
            row = {"experiment": name, "label": label, "layer": layer, "batch": cfgs[0].batch, "runs": len(cfgs),
                   "width": cfgs[0].width, "layers": cfgs[0].layers, "train_len": list(cfgs[0].train_len)}
            if time.perf_counter() - t0 > budget:
                row["error"] = "skipped (budget)"
            else:
                try:
                    c = dataclasses.replace(cfgs[0], layer=layer.split()[0])
                    with switched(selective=layer != "mamba unfused"):     # that arm: the torch expression
                        r = time_batched(c, len(cfgs), seconds) if layer in BATCHED else time_alone(c, seconds)
                    row.update(ms_per_step=round(1000.0 / r["steps_per_s"], 3), graph=r.get("graph"))
                except Exception as exc:  # noqa: BLE001 - a failed arm is a cell, the others still run
                    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


def merge(step_path: str, cost_path: str) -> list:
    """The block's step times of ``step_path`` (a ``--json`` file of this script) into the cost table at
    ``cost_path`` (module text); returns the rows changed or added (``bench_scans.merge``'s list)."""
    import tempfile
    from benchmarks.bench_scans import merge as merge_scans
    from lrnnkit.learn.experiments import get_experiment
    from lrnnkit.learn.mamba_configs import mamba_key
    with open(step_path, encoding="utf-8") as fh:
        doc = json.load(fh)
    from lrnnkit.learn.protocols import _groups, follow
    groups: dict = {}
    for r in doc["rows"]:
        if r.get("layer") in ("mamba", "mamba batched") and "ms_per_step" in r:
            labels = [lab for lab, _ in get_experiment(r["experiment"]).runs("paper")]
            key = (r["experiment"], mamba_key(r["label"], labels))
            runs = r.get("runs") or len(dict(_groups(follow(r["experiment"])))[key[1]])    # older files: the group's
            g = groups.setdefault(key, {**{k: r[k] for k in ("batch", "width", "layers", "train_len")}, "runs": runs})
            g["mamba / batched" if r["layer"] == "mamba batched" else "mamba / alone"] = \
                {"ms_per_step": r["ms_per_step"], "graph": r.get("graph")}
    rows = []
    for (exp, label), g in groups.items():
        if g["runs"] == 1 and "mamba / batched" not in g:
            g["mamba / batched"] = g["mamba / alone"]       # a group of one run: its batch of one is its step
        if "mamba / batched" in g:
            rows.append({"experiment": exp, "label": label, "layer": "mamba", **g})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(step_path))
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"measured_utc": doc.get("measured_utc"), "rows": rows}, fh)
        return merge_scans(path, cost_path, "mamba")


def markdown(found: list) -> str:
    out = ["| experiment | configuration | batch x length | ms/step diagonal | mamba, torch scan | mamba, fused "
           "scan | fused vs torch | fused vs diagonal | runs | batched: diagonal | batched: mamba |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    by = {}
    for r in found:
        by.setdefault((r["experiment"], r["label"]), {})[r["layer"]] = r
    for (exp, label), arms in by.items():
        d, u, m = (arms.get(k, {}) for k in ARMS)
        ms = [f"{x['ms_per_step']:.2f}" if "ms_per_step" in x else "-" for x in (d, u, m)]

        def ratio(p, q):
            return f"{p['ms_per_step'] / q['ms_per_step']:.2f}x" if "ms_per_step" in p and "ms_per_step" in q else "-"
        L = next(iter(arms.values()))["train_len"]
        db, mb = arms.get("diagonal batched", {}), arms.get("mamba batched", {})
        bt = [f"{x['ms_per_step']:.2f}" if "ms_per_step" in x else "-" for x in (db, mb)]
        out.append(f"| {exp} | {label} | {next(iter(arms.values()))['batch']} x {L[0]}-{L[1]} | {' | '.join(ms)} "
                   f"| {ratio(m, u)} | {ratio(m, d)} | {next(iter(arms.values()))['runs']} | {' | '.join(bt)} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=None, help="timed seconds per measurement (default 2; smoke 0.2)")
    ap.add_argument("--only", default=None, help="comma-separated experiments (default: every protocol with "
                                                 "mamba runs)")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU, in seconds")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds after which no new measurement starts")
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--batched", action="store_true", help="also the groups' runs as one model, both layers")
    ap.add_argument("--arms", default=None, help=f"comma-separated, of {', '.join(ARMS + BATCHED)} (default: all)")
    ap.add_argument("--merge", nargs=2, metavar=("STEP_JSON", "COST_JSON"),
                    help="write a --json file's block steps into the protocol cost table, then stop")
    a = ap.parse_args(argv)
    if a.merge:
        for line in merge(*a.merge):
            print(line)
        return 0
    import torch
    device = a.device or ("cpu" if a.smoke or not torch.cuda.is_available() else "cuda")
    errors = device_errors(device, *((16, 8, 10) if a.smoke else ()))
    print(json.dumps({"errors": errors}), flush=True)
    check = batched_check(device) if a.batched else None
    if check is not None:
        print(json.dumps({"batched_check": check}), flush=True)
    found = rows(set(a.only.split(",")) if a.only else None, a.smoke, device,
                 a.seconds or (0.2 if a.smoke else 2.0), a.budget, a.batched,
                 None if a.arms is None else set(a.arms.split(",")))
    print("\n" + markdown(found))
    if a.json:
        import datetime
        from lrnnkit.fileio import atomic_write_text
        doc = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__,
               "measured_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "smoke": a.smoke, "errors": errors, "batched_check": check, "rows": found}
        atomic_write_text(a.json, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
