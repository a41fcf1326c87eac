"""Construction as initialisation ("the reverse direction"): a compiled construction loaded into a
trainable one-layer DeltaProduct model (lrnnkit.learn.init_from_model.ConstructionLRNN), its token accuracy at
length 40 and 10^4 before and after AdamW fine-tuning on words of 3-40 letters; controls: the same model class from
a random initialisation, and the construction with its betas clipped to [0, 1]. CPU, tiny scale.

    python benchmarks/learn_init_from_construction.py [--steps 100] [--record]

Writes benchmarks/results/learning/init_from_construction.json (read by the registry entry
``lrnnkit:construction-init``) and, with --record, the section "learning: construction as init" of RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

OUT = os.path.join(HERE, "results", "learning", "init_from_construction.json")
CASES = [("parity", None), ("group:Z3", None), ("group:S3", None)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--lrs", default="0.001,0.01")
    ap.add_argument("--long", type=int, default=10_000)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--record-only", action="store_true", help="record the existing JSON without re-running")
    a = ap.parse_args()
    if a.record_only:
        with open(OUT) as fh:
            _record_section(json.load(fh)["results"])
        return
    import torch
    torch.set_num_threads(1)
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.learn.init_from_model import finetune_from_construction
    results = []
    for src, cons in CASES:
        for lr in (float(x) for x in a.lrs.split(",")):
            r = finetune_from_construction(src, cons, steps=a.steps, lr=lr, long_length=a.long)
            results.append(r)
            for run in r["runs"]:
                print(src, lr, run["init"], run["before"], run["after"], flush=True)
    doc = {"command": "python benchmarks/learn_init_from_construction.py " + " ".join(sys.argv[1:]),
           "scale": "tiny (CPU, one thread)", "results": results}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    atomic_write_text(OUT, json.dumps(doc, indent=1) + "\n")
    if a.record:
        _record_section(results)


def _record_section(results):
    from _record import record, table
    if True:
        long_len = results[0]["long_length"]
        rows = []
        for r in results:
            for run in r["runs"]:
                rows.append([r["source"], r["construction"], run["init"], r["lr"], r["steps"],
                             f"{run['before']['short']:.3f} / {run['before']['long']:.3f}",
                             f"{run['after']['short']:.3f} / {run['after']['long']:.3f}",
                             f"{run['max_beta_change']:.2e}", f"{run['max_key_change']:.2e}",
                             f"{run['min_abs_eigenvalue_after']:.6f}"])
        body = table(["automaton", "construction", "init", "lr", "steps", f"acc before (40 / {long_len})",
                      f"acc after (40 / {long_len})", "max abs beta change", "max key change (L2)",
                      "min abs eigenvalue after"], rows)
        record("learning: construction as init", body,
               "Command: `python benchmarks/learn_init_from_construction.py --record` (CPU, one thread; batch 16, "
               "words of 3-40 letters, AdamW without weight decay, clip 1.0; accuracy = token accuracy on 4 test "
               "words). Model: one trainable DeltaProduct layer with per-letter keys / betas / values, H_0 and the "
               "construction's linear decoder (lrnnkit.learn.init_from_model: why not SequenceModel). Chance: 1/2 "
               "(parity), 1/3 (Z3), 1/6 (S3).\n\nFinding: fine-tuning from a construction keeps the short-length "
               "accuracy at 1.0 and the betas exactly at 2 (the [0, 2] clamp holds them: min abs eigenvalue stays 1), "
               "but it rotates the keys, so the letters become rotations by slightly wrong angles: no longer a finite "
               "group, the state's phase drifts, and accuracy at length 10^4 falls to chance for Z3 (rotation "
               "construction) and to 0.64-0.77 for S3 after 100 steps, at lr 1e-3 as at 1e-2. Parity (K = 1, a "
               "reflection has no angle) is unaffected. Registry: lrnnkit:construction-init (falsified, "
               "counterexample Z3 at lr 1e-3). Loading the construction into the [0, 1] range (betas clipped to 1) "
               "leaves chance accuracy everywhere, and fine-tuning does not recover it.")


if __name__ == "__main__":
    main()
