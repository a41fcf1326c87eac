"""Does a trained fixed-point model's iteration converge? A probe of one run directory's checkpoint, on the CPU.

    python3 benchmarks/fixed_point_convergence.py RUN_DIR [--lengths 2,3,4,16] [--caps 16,100,400] [--words 256]

For each word length: ``--words`` words of the run's task (numpy seed 0), the model in evaluation mode with the
fixed-point layer's ``max_iters`` set to each cap of ``--caps``; printed per (length, cap): token accuracy, the
iterations the last forward ran and its residual ``||y^l - y^(l-1)||_inf / ||y^l||_inf`` (the stopping rule's,
003 App. D.2, tolerance 0.1), and the accuracy of the first five positions. Then the stopping rule's batch
dependence: the first length's words answered one by one and as one batch, and how many words get a different
answer (the rule stops when every sequence of the batch has converged, so a word alone can stop earlier). The
checkpoint is read by :func:`lrnnkit.learn.train.load_checkpoint`. One JSON line per measurement.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ints(text: str) -> list:
    return [int(x) for x in text.split(",") if x.strip()]


def probe(run_dir: str, lengths: list, caps: list, words: int) -> list:
    import numpy as np
    import torch

    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import TrainConfig, load_checkpoint
    doc, model = load_checkpoint(run_dir)
    task = make_task(TrainConfig.from_json(doc["config"]).task)
    layers = [m.layer for m in model.mixers if hasattr(m, "layer") and hasattr(m.layer, "max_iters")]
    if not layers:
        from lrnnkit.errors import InputError
        raise InputError(f"{run_dir!r}: the model has no fixed-point layer")
    model.eval()
    out = []
    for L in lengths:
        x, y = (torch.as_tensor(a) for a in task.sample(words, L, np.random.default_rng(0)))
        for cap in caps:
            for lay in layers:
                lay.max_iters = cap
            with torch.no_grad():
                right = (model(x).argmax(-1) == y).float()
            out.append({"length": L, "cap": cap, "accuracy": round(float(right.mean()), 4),
                        "iterations": int(layers[0].last_iterations),
                        "residual": round(float(layers[0].last_residual), 4),
                        "by_position": [round(float(p), 3) for p in right.mean(0)[:5]]})
            print(json.dumps(out[-1]), flush=True)
    x, _ = (torch.as_tensor(a) for a in task.sample(words, lengths[0], np.random.default_rng(1)))
    with torch.no_grad():
        alone = torch.stack([model(x[i:i + 1])[0].argmax(-1) for i in range(len(x))])
        together = model(x).argmax(-1)
    out.append({"length": lengths[0], "words": len(x), "answered_differently_alone":
                int((alone != together).any(-1).sum()), "iterations_in_one_batch": int(layers[0].last_iterations)})
    print(json.dumps(out[-1]), flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--lengths", default="2,3,4,16")
    ap.add_argument("--caps", default="16,100,400")
    ap.add_argument("--words", type=int, default=256)
    ap.add_argument("--debug", action="store_true")
    a = ap.parse_args(argv)
    try:
        probe(a.run_dir, _ints(a.lengths), _ints(a.caps), a.words)
    except Exception as exc:  # noqa: BLE001 - one line, exit 2 (--debug: the traceback)
        if a.debug:
            raise
        print(f"fixed_point_convergence: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
