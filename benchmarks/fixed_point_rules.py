"""Does 003's fixed-point model learn state tracking under its authors' iteration rule? Runs of
003-state-tracking's fixed-point configurations trained with a chosen rule, each trained model then read under both.

    python3 benchmarks/fixed_point_rules.py --group S5 --r 1 --train-rule authors [--seed 0] [--max-seconds S]
                                            [--lengths 2,3,16,50] [--words 512] --json OUT.json [--keep DIR]
    python3 benchmarks/fixed_point_rules.py --smoke --json OUT.json        # CPU, tiny, seconds

The configuration is the experiment's own (``lrnnkit experiment 003-state-tracking --scale paper``, label
``GROUP fixed-point r=R 1L``: one layer, width 512, the matrix state with N = 4, at most 16 iterations in training,
batch 128, lr 1e-4, 50,000 steps: 003, App. E.2 and Fig. 3), one seed, with
:attr:`~lrnnkit.learn.train.TrainConfig.fp_iteration` set to ``--train-rule``:

* ``paper``: 003 App. D.2 as printed -- plain iteration, stopped when every sequence of the batch has
  ``||y^l - y^(l-1)||_inf < 0.1 ||y^l||_inf`` or at the cap (100 at evaluation);
* ``authors``: the authors' code (fp-rnn at 4c28602, ``models/model_utils.py``, FPMamba's settings): a damped
  iteration whose step size shrinks when the residual stops improving, the residual per token, stopped on the 75 %
  quantile of the batch in training and on every sequence at evaluation, up to 1,000 damped steps there (each
  followed by the one differentiable iteration)
  (:func:`lrnnkit.layers.fixed_point.authors_iterate`).

``--max-seconds`` stops training there (the schedule stays the 50,000 steps' cosine; the row says how many steps
ran). The training loop's own final evaluation is skipped (8,192 words at five lengths under a rule that may
take 1,000 damped steps a batch, and the eigenvalue summary: minutes, which once cost a whole device call its results);
the trained model is read instead, under each rule: token accuracy at each of ``--lengths`` on ``--words`` words
(``batch_rng(0, L, stream=1)``, the evaluation's stream), the iterations its last forward ran and its residual
statistic, so a model trained under one rule can be compared under the other. The same seed sees the same batches
under either rule (:func:`lrnnkit.learn.tasks.batch_rng`), so two runs differing in the rule alone are paired.
``--keep DIR``: the run directory (checkpoints) goes there, else a temporary folder. One JSON line per reading;
``--json`` is written when training ends and again after every reading, so a call cut short keeps what it measured.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EXPERIMENT = "003-state-tracking"


def _ints(text: str) -> list:
    return [int(x) for x in text.split(",") if x.strip()]


def configured(group: str, r: int, seed: int, rule: str, smoke: bool, device: str, max_seconds):
    """The experiment's configuration ``GROUP fixed-point r=R 1L`` (tiny at ``smoke``: its one r, 2) with the
    seed, the training rule and the device set."""
    from lrnnkit.errors import InputError
    from lrnnkit.learn.experiments import get_experiment
    runs = dict(get_experiment(EXPERIMENT).runs("tiny" if smoke else "paper"))
    label = f"{group} fixed-point r={2 if smoke else r} 1L"
    if label not in runs:
        raise InputError(f"{EXPERIMENT} has no configuration {label!r} (groups A5, S5; r in 1, 2, 4)")
    cfg = dataclasses.replace(runs[label], seed=seed, fp_iteration=rule, device=device,
                              loop="device" if device == "cuda" else "host", max_seconds=max_seconds)
    return label, cfg


def read_under_rules(model, task, lengths, words: int, batch: int = 256, each=None) -> list:
    """Per rule of :data:`lrnnkit.layers.fixed_point.ITERATIONS` and length: token accuracy of ``model`` (eval mode)
    on ``words`` words of ``task``, the most iterations any batch's forward ran and the last batch's residual."""
    import torch

    from lrnnkit.layers.fixed_point import ITERATIONS
    from lrnnkit.learn.tasks import batch_rng
    layers = [m.layer for m in model.mixers if hasattr(getattr(m, "layer", None), "iteration_rule")]
    device = next(model.parameters()).device
    model.eval()
    out = []
    for rule in ITERATIONS:
        for lay in layers:
            lay.iteration_rule = rule
        for L in lengths:
            x, y = (torch.as_tensor(a, device=device) for a in task.sample(words, int(L), batch_rng(0, int(L),
                                                                                                    stream=1)))
            right, its, t0 = 0.0, 0, time.perf_counter()
            with torch.no_grad():
                for i in range(0, words, batch):
                    right += float((model(x[i:i + batch]).argmax(-1) == y[i:i + batch]).float().sum())
                    its = max(its, max(int(lay.last_iterations) for lay in layers))
            res = layers[0].last_residual
            out.append({"rule": rule, "length": int(L), "accuracy": round(right / y.numel(), 4), "iterations": its,
                        "residual": None if res is None else round(float(res), 4),
                        "seconds": round(time.perf_counter() - t0, 2)})
            print(json.dumps(out[-1]), flush=True)
            if each is not None:
                each(out)
    return out


def _write(path, doc: dict) -> None:
    if path:
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(path, json.dumps(doc, indent=1) + "\n")


def run(a) -> dict:
    import torch

    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import train
    device = "cpu" if a.smoke or not torch.cuda.is_available() else "cuda"
    label, cfg = configured(a.group, a.r, a.seed, a.train_rule, a.smoke, device, a.max_seconds)
    keep = a.keep or tempfile.mkdtemp(prefix="fixed_point_rules_")
    run_dir = os.path.join(keep, f"{a.group}_r{a.r}_{a.train_rule}_seed{a.seed}")
    t0 = time.perf_counter()
    res = train(cfg, out=run_dir, evaluate_at_end=False)
    seconds = round(time.perf_counter() - t0, 1)
    model = res.pop("_model")           # the trained model itself (its last checkpoint stays in run_dir)
    doc = {"experiment": EXPERIMENT, "configuration": label, "train_rule": a.train_rule, "seed": a.seed,
           "device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__,
           "steps": res.get("steps"), "steps_configured": cfg.steps, "stopped_early": bool(res.get("stopped_early")),
           "seconds": seconds, "readings": []}
    print(json.dumps(doc), flush=True)
    _write(a.json, doc)
    rows = read_under_rules(model, make_task(cfg.task), _ints(a.lengths), a.words,
                            each=lambda got: _write(a.json, {**doc, "readings": list(got)}))
    return {**doc, "readings": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", default="S5", choices=["A5", "S5"])
    ap.add_argument("--r", type=int, default=1, choices=[1, 2, 4])
    ap.add_argument("--train-rule", default="authors", choices=["paper", "authors"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=None, help="stop training there (the schedule unchanged)")
    ap.add_argument("--lengths", default="2,3,16,50")
    ap.add_argument("--words", type=int, default=512)
    ap.add_argument("--keep", default=None, help="folder for the run directory (default: a temporary one)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--smoke", action="store_true", help="the tiny configuration on the CPU, in seconds")
    ap.add_argument("--debug", action="store_true")
    a = ap.parse_args(argv)
    if a.smoke:
        a.lengths, a.words = "2,16", 16
    try:
        doc = run(a)
    except Exception as exc:  # noqa: BLE001 - one line, exit 2 (--debug: the traceback)
        if a.debug:
            raise
        print(f"fixed_point_rules: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({k: v for k, v in doc.items() if k != "readings"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
