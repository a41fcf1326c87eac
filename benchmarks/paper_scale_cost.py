"""What each paper-scale experiment needs on this machine's GPU: every configuration of ``lrnnkit experiment NAME
--scale paper`` timed on a few training steps (issue 28: "every other one says what it needs").

    python benchmarks/paper_scale_cost.py --device cuda [--only 000-parity,...] [--steps 20] [--json OUT.json]

For each configuration: the model is built as the run builds it and trained with :func:`lrnnkit.learn.train.train`
(the run's own loop: data, bf16 autocast on CUDA, AdamW, clipping) for ``W`` = 3 steps (Triton compilation and
caches) and then for ``W + steps`` steps from scratch; ms per step = the difference of the two runs' seconds over
``steps``. Hours = the paper's step count x ms per step, the training loop only (the final evaluation on
``eval_n`` words per test length and the horizon are not in it); peak bytes from
:func:`lrnnkit.learn.memory.peak_bytes` say how many such runs share one card. Prints a table per experiment
and the sum; a configuration that fails (out of memory, a size limit) is a row with its error.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WARM = 3


def time_config(cfg, steps: int) -> dict:
    import torch
    from lrnnkit.learn.memory import peak_bytes
    from lrnnkit.learn.train import train
    short = dataclasses.replace(cfg, steps=WARM, max_seconds=None, auto_steps=False, checkpoint_every=0)
    train(short, None, evaluate_at_end=False)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    long = dataclasses.replace(short, steps=WARM + steps)
    t0 = time.perf_counter()
    train(short, None, evaluate_at_end=False)
    t1 = time.perf_counter()
    train(long, None, evaluate_at_end=False)
    t2 = time.perf_counter()
    ms = 1e3 * ((t2 - t1) - (t1 - t0)) / steps
    peak = peak_bytes(dataclasses.replace(cfg, eval_batch=min(cfg.eval_batch, 256)))
    return {"ms_per_step": round(ms, 2), "paper_steps": cfg.steps, "hours": round(cfg.steps * ms / 3.6e6, 3),
            "peak_mib": None if peak is None else round(peak / 2**20, 1)}


def main(argv=None) -> int:
    from lrnnkit.learn.experiments import get_experiment, list_experiments
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default=None)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    names = a.only.split(",") if a.only else [e["name"] for e in list_experiments()]
    out = {}
    for name in names:
        exp = get_experiment(name)
        rows = []
        for label, cfg in exp.runs("paper"):
            cfg = dataclasses.replace(cfg, device=a.device)
            try:
                r = time_config(cfg, a.steps)
            except Exception as exc:  # noqa: BLE001 - a configuration that cannot run is a row with its reason
                r = {"error": f"{type(exc).__name__}: {exc}"[:300], "paper_steps": cfg.steps}
            r["label"] = label
            r["layer"], r["batch"], r["width"], r["layers"] = cfg.layer, cfg.batch, cfg.width, cfg.layers
            r["train_len"] = list(cfg.train_len)
            rows.append(r)
            print(name, json.dumps(r), flush=True)
        out[name] = {"rows": rows, "hours": round(sum(r.get("hours", 0) for r in rows), 2),
                     "failed": sum("error" in r for r in rows)}
    import torch
    doc = {"device": torch.cuda.get_device_name(0) if a.device.startswith("cuda") else "cpu",
           "torch": torch.__version__, "steps_timed": a.steps, "experiments": out}
    print("\n| experiment | configurations | ms/step (min-max) | paper steps | GPU-hours, runs one after another | "
          "peak MiB (max) |\n|---|---|---|---|---|---|")
    for name, e in out.items():
        ok = [r for r in e["rows"] if "error" not in r]
        ms = [r["ms_per_step"] for r in ok]
        pk = [r["peak_mib"] for r in ok if r.get("peak_mib") is not None]
        print(f"| {name} | {len(e['rows'])} ({e['failed']} failed) | "
              f"{(f'{min(ms):.1f}-{max(ms):.1f}' if ms else '-')} | "
              f"{sorted({r['paper_steps'] for r in e['rows']})} | {e['hours']:.2f} | {max(pk) if pk else '-'} |")
    print(f"\ntotal GPU-hours: {sum(e['hours'] for e in out.values()):.1f}")
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
