"""Re-score trained checkpoints at their longest test length on this machine, in float32 and in float64, with the
code as it is now: the check that a failure at long inputs is the model's and not the arithmetic's (a model right
in float64 and wrong in float32 lost its answers to rounding or overflow, not to what it learned).

    python benchmarks/reevaluate_checkpoints.py RUNDIRS... [--words 256] [--json OUT.json]

RUNDIRS: run directories (each with checkpoint.json), or folders of them. The words are the final evaluation's
(``lrnnkit.learn.evaluate``: seed 0, stream 1), the first ``--words`` of them; token accuracy over supervised
positions and the last position's accuracy are printed per run and dtype, no autocast.
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


def rescore(run_dir: str, words: int) -> dict:
    import numpy as np
    import torch

    from lrnnkit.learn.evaluate import batch_rng
    from lrnnkit.learn.tasks import IGNORE, make_task
    from lrnnkit.learn.train import load_checkpoint
    doc, model = load_checkpoint(run_dir, "cpu")
    model.eval()
    cfg = doc["config"]
    L = max(int(x) for x in cfg["test_len"])
    x, y = make_task(cfg["task"]).sample(words, L, batch_rng(0, L, stream=1))
    row = {"task": cfg["task"], "seed": cfg["seed"], "length": L, "words": words}
    for dt in (torch.float32, torch.float64):
        m = model.to(dt)
        with torch.no_grad():
            pred = torch.cat([m(torch.as_tensor(x[i:i + 64])).argmax(-1) for i in range(0, words, 64)]).numpy()
        sup = y != IGNORE
        last = sup.shape[1] - 1 - np.argmax(sup[:, ::-1], axis=1)
        rows = np.arange(words)
        row[str(dt).split(".")[-1]] = {"token_accuracy": round(float((pred == y)[sup].mean()), 4),
                                       "final_accuracy": round(float((pred[rows, last] == y[rows, last]).mean()), 4)}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--words", type=int, default=256)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.words < 1:
        ap.error(f"--words must be positive, not {a.words}")
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
        r = rescore(d, a.words)
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
