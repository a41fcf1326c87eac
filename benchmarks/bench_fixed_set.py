"""What a fixed training set costs (``TrainConfig.train_words``, :mod:`lrnnkit.learn.dataset`): for each paper
configuration whose protocol trains on a fixed set (000-s5, 001-deltaproduct, 003-state-tracking, followed by
:func:`lrnnkit.learn.protocols.follow`), the seconds to draw the set, its bytes, the seconds to refill one epoch's
order, and milliseconds per training step on the config's own loop with fresh batches and with the fixed set.

    python3 benchmarks/bench_fixed_set.py [--device cuda] [--steps 200] [--only 000-s5] [--out DIR] [--tiny]

``--tiny`` shrinks every set to 4096 words and the steps to 20 (a CPU smoke run). Prints a table last; writes
``bench_fixed_set.json`` under ``--out`` (default ``$OUT``, else ``benchmarks/results/fixed_set``). On an H200 the
whole run takes about 3 minutes (the 2,000,000-word set of 001 is the largest: 512 MB).
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

EXPERIMENTS = ("000-s5", "001-deltaproduct", "003-state-tracking")


def shapes(only) -> list:
    """``[(experiment, label, cfg)]``: one followed run (seed 0) per configuration shape with a fixed set."""
    from lrnnkit.learn.protocols import follow
    out, seen = [], set()
    for name in EXPERIMENTS:
        if only and name not in only:
            continue
        for label, cfg in follow(name):
            key = (cfg.task, cfg.layer, cfg.width, cfg.batch, tuple(cfg.train_len), cfg.train_words)
            if cfg.train_words is None or cfg.seed != 0 or key in seen:
                continue
            seen.add(key)
            out.append((name, label, cfg))
    return out


def step_ms(cfg, steps: int) -> tuple:
    """``(ms per step, loop, graph)`` of ``steps`` steps after 5 warm-up steps (the capture among them)."""
    import torch
    from lrnnkit.learn.step import make_step
    from lrnnkit.learn.train import build
    task, model, opt = build(cfg)
    dev = torch.device(cfg.device)
    st = make_step(cfg, task, model, opt, dev)
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
    for s in range(5):
        st.run(s)
        st.updating = False
    sync()
    t = time.perf_counter()
    for s in range(5, 5 + steps):
        st.run(s)
        st.updating = False
    sync()
    ms = (time.perf_counter() - t) / steps * 1e3
    st.close()
    return ms, cfg.step_loop, st.graph


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--only", default="")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "results", "fixed_set"))
    a = ap.parse_args(argv)
    import numpy as np
    import torch
    from lrnnkit.learn.dataset import FixedSet, epoch_order
    from lrnnkit.learn.tasks import make_task
    only = [x for x in a.only.split(",") if x]
    steps = 20 if a.tiny else a.steps
    rows = []
    for name, label, cfg in shapes(only):
        words = 4096 if a.tiny else cfg.train_words
        cfg = dataclasses.replace(cfg, device=a.device, train_words=max(words, cfg.batch), steps=10 ** 6)
        dev = torch.device(a.device)
        sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
        task = make_task(cfg.task)
        t = time.perf_counter()
        fs = FixedSet(task, cfg.train_words, cfg.batch, cfg.train_len, [cfg.seed], dev)
        sync()
        draw_s = time.perf_counter() - t
        t = time.perf_counter()
        perm = torch.from_numpy(np.stack([epoch_order(cfg.seed, 7, cfg.train_words)]))
        fs.order[:, 1].copy_(perm)
        sync()
        refill_s = time.perf_counter() - t
        nbytes = fs.nbytes
        del fs, perm
        fresh = step_ms(dataclasses.replace(cfg, train_words=None), steps)
        fixed = step_ms(cfg, steps)
        rows.append({"experiment": name, "label": label, "task": cfg.task, "layer": cfg.layer, "batch": cfg.batch,
                     "train_len": list(cfg.train_len), "words": cfg.train_words, "set_bytes": nbytes,
                     "draw_seconds": round(draw_s, 3), "epoch_refill_seconds": round(refill_s, 4),
                     "loop": fixed[1], "graph": fixed[2], "fresh_ms": round(fresh[0], 3),
                     "fixed_ms": round(fixed[0], 3), "steps_timed": steps})
        print(json.dumps(rows[-1]), flush=True)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "bench_fixed_set.json")
    with open(path + ".tmp", "w") as fh:
        json.dump({"device": a.device, "torch": torch.__version__,
                   "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "rows": rows}, fh,
                  indent=1)
    os.replace(path + ".tmp", path)
    print(f"\n{'experiment':20s} {'configuration':34s} {'words':>9s} {'MB':>7s} {'draw s':>7s} {'refill s':>8s} "
          f"{'loop':6s} {'fresh ms':>8s} {'fixed ms':>8s}")
    for r in rows:
        print(f"{r['experiment']:20s} {r['label'][:34]:34s} {r['words']:9d} {r['set_bytes'] / 1e6:7.1f} "
              f"{r['draw_seconds']:7.2f} {r['epoch_refill_seconds']:8.3f} {r['loop']:6s} {r['fresh_ms']:8.3f} "
              f"{r['fixed_ms']:8.3f}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
