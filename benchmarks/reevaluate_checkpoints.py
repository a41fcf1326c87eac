"""Re-score trained checkpoints at their longest test length on this machine, in float32 and in float64, with the
code as it is now: the check that a failure at long inputs is the model's and not the arithmetic's (a model right
in float64 and wrong in float32 lost its answers to rounding or overflow, not to what it learned).

    python benchmarks/reevaluate_checkpoints.py RUNDIRS... [--words 256] [--json OUT.json]

RUNDIRS: run directories (each with checkpoint.json), or folders of them. The words are the final evaluation's
(:func:`lrnnkit.learn.evaluate.evaluate`, seed 0), ``--words`` of them, at ``--length`` (default: each run's
longest test length); token accuracy over supervised positions and the last position's accuracy are printed per run
and dtype, no autocast.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def _run_dirs(paths: list) -> list:
    out = []
    for p in paths:
        if os.path.exists(os.path.join(p, "checkpoint.json")):
            out.append(p)
        elif os.path.isdir(p):
            out += _run_dirs(sorted(os.path.join(p, q) for q in os.listdir(p) if os.path.isdir(os.path.join(p, q))))
    return out


def rescore(run_dir: str, words: int, length: int | None = None) -> dict:
    """One run's checkpoint scored by :func:`lrnnkit.learn.evaluate.evaluate` (the final evaluation's words: seed 0)
    at ``length`` (default: its longest test length), in float32 and float64, no autocast."""
    import torch

    from lrnnkit.learn.evaluate import evaluate
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import load_checkpoint
    doc, model = load_checkpoint(run_dir, "cpu")
    cfg = doc["config"]
    L = length or max(int(x) for x in cfg["test_len"])
    task = make_task(cfg["task"])
    row = {"task": cfg["task"], "seed": cfg["seed"], "length": L, "words": words}
    for dt in (torch.float32, torch.float64):
        ev = evaluate(model.to(dt), task, [L], n=words, seed=0, batch=64)
        row[str(dt).split(".")[-1]] = {"token_accuracy": round(ev["accuracy"][str(L)], 4),
                                       "final_accuracy": round(ev["final_accuracy"][str(L)], 4)}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--words", type=int, default=256)
    ap.add_argument("--length", type=int, default=None, help="score at this length (default: each run's longest "
                    "test length)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.words < 1 or (a.length is not None and a.length < 1):
        ap.error(f"--words and --length must be positive, not {a.words} and {a.length}")
    dirs = _run_dirs(a.paths)
    if not dirs:
        print(f"error: no run directory with a checkpoint.json under {' '.join(a.paths)}", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    out = {"measured_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=HERE).stdout.strip(),
           "command": "python benchmarks/reevaluate_checkpoints.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "runs": {}}
    print("| run | length | float32 token / final | float64 token / final |\n|---|---:|---|---|")
    for d in dirs:
        r = rescore(d, a.words, a.length)
        out["runs"][os.path.basename(os.path.normpath(d))] = r
        f, g = r["float32"], r["float64"]
        print(f"| {os.path.basename(os.path.normpath(d))} | {r['length']} | {f['token_accuracy']:.4f} / "
              f"{f['final_accuracy']:.4f} | {g['token_accuracy']:.4f} / {g['final_accuracy']:.4f} |", flush=True)
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(out, fh, indent=1)
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
