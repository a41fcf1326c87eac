"""The price of 001's Fig. 3 grids at the paper's protocol, per cell, from a cost table: GPU-hours and the
wall-clock on 4 and 8 GPUs.

    python3 benchmarks/price_001_grid.py [--cost COST.json] [--gpus 4,8] [--call-seconds 540] [--json OUT.json]

``COST.json`` is what ``benchmarks/paper_scale_cost.py --json`` writes (default: the H100 table in
``benchmarks/results/paper_scale/``); the specs are ``examples/sweeps/paper_001_deltaproduct.toml`` and
``paper_001_deltanet_layers.toml`` (``--specs`` to change). Each point of a spec is matched with its configuration
of ``001-deltaproduct`` / ``001-deltanet-layers`` at ``--scale paper`` (task, layer, n_h, layers) and takes that
row's ms per step. Where the point's tokens per step (batch x longest training length) differ from the row's (S3 at
the paper's batch 2048 against the experiment's 1024), the ms per step is scaled by their ratio and the cell says
``scaled``: step time linear in tokens, a compute-bound estimate (a card not yet full steps faster; re-time with
``paper_scale_cost.py`` on the spec's configurations to replace it). Hours = steps x ms / 3.6e6, training only (the
final evaluation on 500,000 words per test length is not in it), as the cost table.

Per cell also: one run's minutes and its checkpoint's size (MiB: fp32 weights and AdamW's two moments, 12 bytes
per parameter of the model built on the CPU), the two numbers that decide whether a run can outlive one GPU call:
a run cut by a call's end resumes only from a checkpoint carried to the next call, and what travels is capped
(/work/.library/device/README.md: 16 MiB per file and 64 MiB in all back from ``$OUT``, 64 MiB carried in).

Wall-clock: :func:`lrnnkit.sweep.plan.pack` places the runs in grid order on G cards with the spec's ``num_gpus``
and their priced run times; "alone" is a cell's runs on an otherwise empty machine, the totals are each spec's
whole grid, then both one after the other. Calls = the number of GPU calls of ``--call-seconds`` (a run cut by
the end of a call resumes from its checkpoint in the next, the store carried between them).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_COST = os.path.join(HERE, "results", "paper_scale", "cost_call11_h100.json")
SPECS = {"001-deltaproduct": os.path.join(ROOT, "examples", "sweeps", "paper_001_deltaproduct.toml"),
         "001-deltanet-layers": os.path.join(ROOT, "examples", "sweeps", "paper_001_deltanet_layers.toml")}
_MATCH = ("task", "layer", "n_h", "layers")


def _row_of(cfg, rows_by_label: dict, exp_runs: list) -> tuple:
    """(label, cost row) of the experiment configuration that ``cfg`` (a spec point's TrainConfig) trains."""
    for label, ecfg in exp_runs:
        if all(getattr(cfg, k) == getattr(ecfg, k) for k in _MATCH):
            if label not in rows_by_label:
                raise ValueError(f"the cost table has no row {label!r}")
            return label, rows_by_label[label]
    raise ValueError(f"no configuration of the experiment trains {[getattr(cfg, k) for k in _MATCH]}")


def price(cost: dict, specs: dict, gpus: list, call_seconds: float) -> dict:
    """Per cell (a configuration: the spec's points without their seed) and per spec: runs, GPU-hours and the
    wall-clock on each of ``gpus`` cards (module docstring)."""
    from lrnnkit.learn.experiments import get_experiment
    from lrnnkit.learn.train import TrainConfig, build
    from lrnnkit.sweep.plan import pack
    from lrnnkit.sweep.spec import load_spec
    out = {"device": cost["device"], "gpus": gpus, "call_seconds": call_seconds, "specs": {}}
    for name, path in specs.items():
        spec = load_spec(path)
        rows = {r["label"]: r for r in cost["experiments"][name]["rows"] if "error" not in r}
        exp_runs = get_experiment(name).runs("paper")
        share = float(spec.num_gpus) if spec.num_gpus != "auto" else 1.0
        runs, cells = [], {}
        for p in spec.points():
            cfg = TrainConfig(**p)
            label, row = _row_of(cfg, rows, exp_runs)
            ratio = (cfg.batch * cfg.train_len[1]) / (row["batch"] * row["train_len"][1])
            ms = row["ms_per_step"] * ratio
            secs = cfg.steps * ms / 1e3
            runs.append(secs)
            if label not in cells:
                model = build(TrainConfig(**{**p, "device": "cpu"}))[1]
                cells[label] = {"cell": label, "runs": 0, "steps": cfg.steps, "ms_per_step": round(ms, 2),
                                "scaled": ratio != 1, "run_minutes": round(secs / 60, 1),
                                "checkpoint_mib": round(12 * sum(t.numel() for t in model.parameters()) / 2**20, 1),
                                "seconds": []}
            c = cells[label]
            c["runs"] += 1
            c["seconds"].append(secs)
        for c in cells.values():
            c["gpu_hours"] = round(share * sum(c["seconds"]) / 3600, 3)
            c["wall_hours_alone"] = {str(g): round(pack([share] * c["runs"], g, c["seconds"])["makespan"] / 3600, 3)
                                     for g in gpus}
            del c["seconds"]
        total = {"runs": len(runs), "gpu_hours": round(share * sum(runs) / 3600, 3), "wall_hours": {}, "calls": {}}
        for g in gpus:
            wall = pack([share] * len(runs), g, runs)["makespan"]
            total["wall_hours"][str(g)] = round(wall / 3600, 3)
            total["calls"][str(g)] = math.ceil(wall / call_seconds)
        out["specs"][name] = {"spec": os.path.relpath(path, ROOT), "num_gpus": spec.num_gpus,
                              "cells": list(cells.values()), "total": total}
    both = {"gpu_hours": round(sum(s["total"]["gpu_hours"] for s in out["specs"].values()), 3),
            "wall_hours": {str(g): round(sum(s["total"]["wall_hours"][str(g)] for s in out["specs"].values()), 3)
                           for g in gpus},
            "calls": {str(g): sum(s["total"]["calls"][str(g)] for s in out["specs"].values()) for g in gpus}}
    out["total"] = both
    return out


def table_text(doc: dict) -> str:
    from benchmarks._record import table
    gs = doc["gpus"]
    head = ["cell", "runs", "steps", "ms/step", "run min", "ckpt MiB", "GPU-h"] + [f"wall h, {g} GPUs" for g in gs]
    rows = []
    for name, s in doc["specs"].items():
        for c in s["cells"]:
            rows.append([c["cell"], str(c["runs"]), f"{c['steps']:,}",
                         f"{c['ms_per_step']:.2f}" + (" (scaled)" if c["scaled"] else ""), f"{c['run_minutes']:.0f}",
                         f"{c['checkpoint_mib']:.0f}", f"{c['gpu_hours']:.2f}"]
                        + [f"{c['wall_hours_alone'][str(g)]:.2f}" for g in gs])
        t = s["total"]
        rows.append([f"**{name}** (whole grid)", str(t["runs"]), "", "", "", "", f"{t['gpu_hours']:.2f}"]
                    + [f"{t['wall_hours'][str(g)]:.2f} ({t['calls'][str(g)]} calls)" for g in gs])
    b = doc["total"]
    rows.append(["**both grids**, one after the other", "", "", "", "", "", f"{b['gpu_hours']:.2f}"]
                + [f"{b['wall_hours'][str(g)]:.2f} ({b['calls'][str(g)]} calls)" for g in gs])
    return (f"Cost table: {doc['device']}; wall-clock per cell: its runs alone on the machine; calls: GPU calls "
            f"of {doc['call_seconds']:g} s.\n\n" + table(head, rows))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cost", default=DEFAULT_COST, help="a --json file of benchmarks/paper_scale_cost.py")
    ap.add_argument("--specs", nargs=2, default=None, metavar=("DELTAPRODUCT.toml", "LAYERS.toml"))
    ap.add_argument("--gpus", default="4,8")
    ap.add_argument("--call-seconds", type=float, default=540.0)
    ap.add_argument("--json", default=None, help="where to write the JSON (default: $OUT/price_001_grid.json when "
                    "$OUT is set)")
    a = ap.parse_args(argv)
    try:
        gpus = [int(x) for x in a.gpus.split(",")]
        with open(a.cost, encoding="utf-8") as fh:
            cost = json.load(fh)
    except (ValueError, OSError) as exc:
        print(f"price_001_grid: {exc}", file=sys.stderr)
        return 2
    if any(g < 1 for g in gpus) or not a.call_seconds > 0:
        print(f"price_001_grid: --gpus needs positive counts and --call-seconds a positive time, got {a.gpus!r}, "
              f"{a.call_seconds!r}", file=sys.stderr)
        return 2
    specs = dict(zip(SPECS, a.specs)) if a.specs else SPECS
    try:
        doc = price(cost, specs, gpus, a.call_seconds)
    except (ValueError, KeyError) as exc:      # a cost table or spec that does not fit the grids
        print(f"price_001_grid: {exc}", file=sys.stderr)
        return 2
    dest = a.json or (os.path.join(os.environ["OUT"], "price_001_grid.json") if os.environ.get("OUT") else None)
    if dest:
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(dest, json.dumps(doc, indent=1) + "\n")
    print(table_text(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
