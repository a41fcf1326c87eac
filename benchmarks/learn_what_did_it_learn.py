"""What did the trained models learn? Spectra, betas, key PCA and L* extraction for every run of an experiment
directory written by ``lrnnkit experiment NAME --out DIR`` (one checkpoint per run), next to the certified
construction for the same automaton.

    python benchmarks/learn_what_did_it_learn.py DIR [DIR ...] [--record] [--out FILE.json]

Per run: the accuracy the experiment measured, the spectrum of the learned transition matrices on 16 test words
(min real part, fraction of negative eigenvalues, fraction near -1), the reflection heads (median beta near 2) and
the key PCA (GH layers), and the L* extraction (lrnnkit.learn.extract.extract_from_trained, the task's automaton as
the teacher, 500 random-walk steps, at most 4 rounds and 4x the target's states): isomorphic to the target, or the
shortest distinguishing word. The row "construction" is the compiled model of the same automaton read by the same tools.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def analyse_dir(d: str) -> list:
    import numpy as np
    import torch

    import lrnnkit as L
    from lrnnkit.learn.analysis import analyze, analyze_compiled
    from lrnnkit.learn.extract import extract_from_trained
    from lrnnkit.learn.tasks import batch_rng, make_task
    from lrnnkit.learn.train import load_checkpoint
    with open(os.path.join(d, "results.json")) as fh:
        rec = json.load(fh)
    rows = []
    task = None
    for label, run in rec["runs"].items():
        sub = os.path.join(d, "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[:80])
        if not os.path.exists(os.path.join(sub, "checkpoint.json")):
            continue
        doc, model = load_checkpoint(sub)
        model.eval()
        task = make_task(doc["config"]["task"])
        x, _ = task.sample(16, 64, batch_rng(0, 64, stream=2))
        a = analyze(model, torch.as_tensor(x), letters=list(task.vocab), pad_id=task.pad_id)["layers"]
        ev = a[0]["eigenvalues"]
        ex = extract_from_trained(model, task)
        accs = run["test_accuracy"]
        rows.append({"experiment": rec["name"], "scale": rec["scale"], "run": label,
                     "accuracy": accs, "min_real": ev["min_real"], "fraction_negative": ev["fraction_negative"],
                     "fraction_near_minus_one": ev["fraction_near_minus_one"],
                     "reflection_heads": a[0]["betas"]["reflection_heads"] if a[0]["betas"] else None,
                     "key_components_99": a[0]["key_pca"]["components_99_max"] if a[0]["key_pca"] else None,
                     "extracted_states": ex.automaton.n_states, "target_states": ex.target.n_states,
                     "isomorphic": ex.isomorphic, "distinguishing_word": ex.distinguishing_symbols,
                     "model_output": ex.model_output, "target_output": ex.target_output,
                     "lstar_rounds": ex.stats.get("rounds")})
        print(rows[-1], flush=True)
    if task is not None and hasattr(task, "fsa"):
        try:
            m = L.compile(task.fsa)
            c = analyze_compiled(m)["layers"][0]
            rows.append({"experiment": rec["name"], "scale": "certified", "run": f"construction "
                         f"{m.provenance.get('construction')}", "accuracy": "1.0 at every length (certified)",
                         "min_real": c["eigenvalues"]["min_real"],
                         "fraction_negative": c["eigenvalues"]["fraction_negative"],
                         "fraction_near_minus_one": c["eigenvalues"]["fraction_near_minus_one"],
                         "reflection_heads": c["betas"]["reflection_heads"] if c["betas"] else None,
                         "key_components_99": c["key_pca"]["components_99_max"] if c["key_pca"] else None,
                         "extracted_states": L.extract_automaton(L.model_oracle(m), target=task.fsa).automaton.n_states,
                         "target_states": L.automata.minimize(task.fsa).n_states, "isomorphic": True,
                         "distinguishing_word": None, "model_output": None, "target_output": None,
                         "lstar_rounds": None})
        except Exception as exc:  # a task without a one-layer construction: no reference row
            print(f"no construction row: {exc}")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "learning", "what_did_it_learn.json"))
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    from lrnnkit.fileio import atomic_write_text
    rows = []
    for d in a.dirs:
        rows += analyse_dir(d)
    atomic_write_text(a.out, json.dumps({"command": "python benchmarks/learn_what_did_it_learn.py DIR",
                                         "rows": rows}, indent=1) + "\n")
    if a.record:
        from _record import record, table

        def f(x):
            return "n/a" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))
        body = table(["experiment", "scale", "run", "accuracy per test length", "min real eig", "frac. negative",
                      "frac. near -1", "reflection heads", "key PCA comps (99%)", "L*: states (target)",
                      "isomorphic / shortest distinguishing word (model vs target)"],
                     [[r["experiment"], r["scale"], r["run"],
                       (", ".join(f"{k}: {v:.3f}" for k, v in r["accuracy"].items())
                        if isinstance(r["accuracy"], dict) else r["accuracy"]),
                       f(r["min_real"]), f(r["fraction_negative"]), f(r["fraction_near_minus_one"]),
                       f(r["reflection_heads"]), f(r["key_components_99"]),
                       f"{r['extracted_states']} ({r['target_states']})",
                       "isomorphic" if r["isomorphic"] else
                       f"'{' '.join(r['distinguishing_word'] or [])}' ({r['model_output']} vs {r['target_output']})"]
                      for r in rows])
        record("learning: what did it learn", body,
               "Command: `python benchmarks/learn_what_did_it_learn.py DIR --record` on the output directories of "
               "`lrnnkit experiment NAME --out DIR`. Spectra on 16 test words of 64 tokens; L* with the task's "
               "automaton as the teacher plus 500 random-walk steps, at most 4 rounds and 4x the target's states "
               "(L* only sees short words: "
               "'isomorphic' means the model agrees with the automaton on every word L* asked, not at every length).")


if __name__ == "__main__":
    main()
