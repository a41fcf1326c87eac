"""Horizons of trained checkpoints on the CPU: where each model first goes wrong, its accuracy against length in
float32, bf16 autocast and float64, why it breaks (the learned transitions per letter), and one plot.

    python benchmarks/horizons_of_checkpoints.py RUN_DIR [RUN_DIR ...] --max-len 2048 --out DIR \
        [--max-words 60000] [--samples 256] [--fp64-samples 64] [--plot PNG] [--record] [--reuse]

Per checkpoint (a ``lrnnkit train --out`` run directory, loaded by :func:`lrnnkit.learn.train.load_checkpoint`),
one JSON ``DIR/<run directory name>.json`` with:

* ``horizon``: :func:`lrnnkit.learn.horizon.horizon_checkpoint` per precision -- ``fp32`` (the CPU's float32) and
  ``bf16`` (torch's CPU bf16 autocast, ``autocast_cpu``; not the CUDA kernels' numerics): the exhaustive search over
  every word of length 1..L while the total stays within ``--max-words``, ``--samples`` random words of length
  ``--max-len`` scored after every prefix, and the L* extraction (at most ``--extract-seconds``);
* ``fp64``: the sampled curve alone in float64 (``--fp64-samples`` words): a break that float64 shares is the
  learned function's, not rounding's;
* ``margin``: the median logit margin (right class minus the best wrong one) against length, float32, on the
  same sampled words;
* ``letters``: per letter, over the first layer's heads and the tokens of 64 random words of length 64 (the
  transitions depend on the context through the short convolutions): the median beta of the factor with the
  largest beta and its distance to 2 (a reflection, 000 Theorem 3 / 001 Fig. 5), the median eigenvalue with the
  smallest real part, and ``contraction``: the median of ``1 - |lambda|`` over the eigenvalues off the identity
  (``|lambda - 1| > 0.05``): an exact group representation keeps every eigenvalue on the unit circle, a
  contraction ``c`` per letter shrinks what the state holds by ``(1 - c)^m`` after ``m`` letters;
* ``drift``: :func:`reflection_drift`, per head, how much of what a reflection wrote is left after 16..512 letters.

``--reuse`` keeps the JSONs already in ``--out`` (adding what they lack) and only redraws and records.

The plot: accuracy after the last letter against length (log x axis), one line per checkpoint (float32), chance
per task dotted, a cross at each model's shortest known wrong length. ``--record`` writes the table to
benchmarks/RESULTS.md (section "learning: horizons of GPU-trained checkpoints").
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (os.path.dirname(HERE), HERE):       # lrnnkit from this checkout, and _record beside this file
    if _p not in sys.path:
        sys.path.insert(0, _p)
import _record  # noqa: E402

SECTION = "learning: horizons of GPU-trained checkpoints"
OFF_IDENTITY = 0.05     # an eigenvalue within this of 1 belongs to the untouched part of the state


def exhaustive_budget(k: int, max_words: int) -> int:
    """The words of length 1..L over ``k`` letters for the largest L whose total is within ``max_words`` (at least
    ``k``: length 1)."""
    total, n = 0, 1
    while True:
        n *= k
        if total + n > max_words:
            return max(total, k)
        total += n


def _margins(model, words, target_ids, dtype_autocast=False):
    """Median logit margin (right class minus the best wrong class) after every prefix, (T,)."""
    import numpy as np
    import torch
    out = []
    with torch.no_grad():
        for i in range(0, len(words), 32):
            x = torch.as_tensor(words[i:i + 32])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype_autocast):
                lg = model(x).float()
            y = torch.as_tensor(target_ids[i:i + 32])
            right = lg.gather(-1, y[..., None])[..., 0]
            lg = lg.scatter(-1, y[..., None], float("-inf"))
            out.append((right - lg.max(-1).values).numpy())
    return np.median(np.concatenate(out), axis=0)


def letter_analysis(model, task, seed: int = 0) -> dict:
    """Per letter: betas (GH layers) and eigenvalues of the first layer's transitions (module docstring)."""
    import numpy as np
    import torch
    rng = np.random.default_rng(seed)
    letters = np.asarray(task.letters)
    x = torch.as_tensor(letters[rng.integers(0, len(letters), size=(64, 64))])
    A = model.transition_matrices(x)[0].double().numpy()            # (B, T, H, K, K)
    gh = model.config["layer"] in ("deltanet", "deltaproduct")
    beta = model.betas(x)[0].double().numpy() if gh else None        # (B, T, n_h, H)
    ev = np.linalg.eigvals(A)                                       # (B, T, H, K)
    tok = x.numpy()
    out = {}
    for a in letters:
        sel = tok == a
        e = ev[sel]                                                 # (N, H, K)
        bmax = beta[sel].max(axis=1) if gh else None                # (N, H): the larger factor's beta
        low = e[np.arange(e.shape[0])[:, None], np.arange(e.shape[1])[None, :], e.real.argmin(-1)]
        off = e[np.abs(e - 1) > OFF_IDENTITY]
        out[task.fsa.alphabet[a]] = {
            "tokens": int(sel.sum()),
            "beta_max_median_per_head": None if bmax is None else [round(float(v), 4)
                                                                   for v in np.median(bmax, axis=0)],
            "two_minus_beta_max_median": None if bmax is None else float(np.median(2 - bmax.max(axis=1))),
            "lowest_eigenvalue_median_per_head": [round(float(v), 4) for v in np.median(low.real, axis=0)],
            "off_identity_eigenvalues": int(off.size),
            "contraction_median": float(np.median(1 - np.abs(off))) if off.size else None,
            "contraction_of_most_negative": float(np.median(1 - np.abs(low.min(axis=1).real)))}
    return out


DRIFT_LENGTHS = (16, 64, 128, 256, 512)
PLOT = os.path.join(os.path.dirname(HERE), "docs", "_static", "horizons_gpu_checkpoints.png")


def reflection_drift(model, task, *, words: int = 4, seed: int = 1) -> dict:
    """How fast what a reflection writes into the state fades, per head of the first layer, in float64 on the
    float32 model's transitions: on each of ``words`` random words, ``u`` is the unit eigenvector of the most
    negative eigenvalue of the transition at the first token that is the target's first non-identity letter
    (the first letter that moves the start state: parity ``1``, S3 ``(1,2)``), and ``|A_{t0+L} ... A_{t0+1} u|``
    its norm ``L`` letters later (1 for an exact reflection followed by exact group elements: orthogonal on what they
    touch). Returns per head the median eigenvalue and the median norms at :data:`DRIFT_LENGTHS`, and ``rate``:
    ``-ln(norm) / L`` at the longest length (the contraction per letter)."""
    import numpy as np
    import torch
    letters = np.asarray(task.letters)
    fsa = task.fsa
    ref = next(i for i, a in enumerate(letters) if fsa.delta[fsa.start, a] != fsa.start)
    lead = 64
    T = max(DRIFT_LENGTHS) + lead
    rng = np.random.default_rng(seed)
    xs = letters[rng.integers(0, len(letters), size=(words, T))]
    for row in xs:      # the letter within the first `lead` positions, so that t0 + max(DRIFT_LENGTHS) < T (with
        if not (row[:lead] == letters[ref]).any():     # 60 letters it is missing there in a third of the words)
            row[rng.integers(0, lead)] = letters[ref]
    x = torch.as_tensor(xs)
    A = model.transition_matrices(x)[0].double()                    # (B, T, H, K, K)
    heads = []
    for h in range(A.shape[2]):
        lam, norms = [], {L: [] for L in DRIFT_LENGTHS}
        for b in range(words):
            t0 = int(np.nonzero(x[b].numpy() == letters[ref])[0][0])
            w, V = np.linalg.eig(A[b, t0, h].numpy())
            i = int(w.real.argmin())
            lam.append(float(w[i].real))
            v = torch.as_tensor(V[:, i].real / np.linalg.norm(V[:, i].real))
            for L in range(1, max(DRIFT_LENGTHS) + 1):
                v = A[b, t0 + L, h] @ v
                if L in norms:
                    norms[L].append(float(v.norm()))
        med = {str(L): round(float(np.median(n)), 4) for L, n in norms.items()}
        Lmax = max(DRIFT_LENGTHS)
        heads.append({"head": h, "eigenvalue": round(float(np.median(lam)), 5), "norm": med,
                      "rate": round(float(-np.log(max(med[str(Lmax)], 1e-300)) / Lmax), 5)})
    return {"letter": fsa.alphabet[letters[ref]], "words": words, "heads": heads}


def analyse(run_dir: str, args) -> dict:
    import numpy as np

    from lrnnkit.learn.horizon import horizon, horizon_checkpoint, horizon_target
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import load_checkpoint
    doc, model = load_checkpoint(run_dir)
    model.eval()
    cfg = doc["config"]
    task = make_task(cfg["task"])
    fsa, letters, labels = horizon_target(task)
    rec = {"run": os.path.basename(os.path.normpath(run_dir)), "task": cfg["task"], "layer": cfg["layer"],
           "n_h": cfg["n_h"], "eig_range": cfg["eig_range"], "width": cfg["width"], "heads": cfg["heads"],
           "train_len": cfg["train_len"], "step": doc["step"], "steps": cfg["steps"],
           "trained_on": f"{cfg['device']}, bf16 autocast {bool(cfg['bf16'])}",
           "chance": 1.0 / len(labels), "horizon": {}}
    words = exhaustive_budget(len(letters), args.max_words)
    for prec in args.precisions:
        t = time.perf_counter()
        h = horizon_checkpoint(run_dir, max_len=args.max_len, max_words=words, samples=args.samples,
                               max_extract_seconds=args.extract_seconds, max_extract_queries=args.extract_queries,
                               autocast_cpu=prec == "bf16", seed=args.seed)
        rec["horizon"][prec] = h
        print(f"{rec['run']} {cfg['task']} {cfg['eig_range']} {prec}: {h['statement']} "
              f"({time.perf_counter() - t:.0f} s)", flush=True)
    # the same sampled words as the curve (horizon draws them from default_rng(seed) first)
    rng = np.random.default_rng(args.seed)
    w = rng.integers(0, fsa.n_letters, size=(args.samples, args.max_len))
    tgt = np.array([labels.index(o) for o in fsa.outputs])[fsa.trace_batch(w)]
    toks = np.asarray(letters)[w]
    lens = [int(k) for k in rec["horizon"][args.precisions[0]]["accuracy_by_length"]]
    m = _margins(model, toks[: args.margin_samples], tgt[: args.margin_samples])
    rec["margin"] = {"samples": min(args.margin_samples, args.samples),
                     "median_by_length": {str(L): round(float(m[L - 1]), 4) for L in lens}}
    rec["letters"] = letter_analysis(model, task, args.seed)
    rec["drift"] = reflection_drift(model, task)
    if args.fp64_samples:
        t = time.perf_counter()
        h = horizon(model.double(), task, max_len=args.max_len, max_words=1, samples=args.fp64_samples,
                    extract=False, seed=args.seed)
        rec["fp64"] = {k: h[k] for k in ("accuracy_by_length", "first_length_below_1", "samples")}
        print(f"{rec['run']} fp64 curve: {h['accuracy_by_length']} ({time.perf_counter() - t:.0f} s)", flush=True)
    return rec


def shortest_wrong(h: dict):
    """(length, word) of the shortest wrong word known, or (None, None)."""
    return (h["horizon"], h["shortest_wrong_word"]) if h["horizon"] is not None else \
        (h["wrong_at_length"], h["wrong_word"])


def label(rec: dict) -> str:
    lo, hi = rec["eig_range"]
    return f"{rec['task']} [{lo:g},{hi:g}]"


def plot(recs: list, path: str, prec: str = "fp32") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lrnnkit.fileio import save_figure
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    chance_done = set()
    for i, rec in enumerate(recs):
        h = rec["horizon"][prec]
        c = h["accuracy_by_length"]
        xs = sorted(int(k) for k in c)
        color = f"C{i}"
        ax.plot(xs, [c[str(k)] for k in xs], marker="o", ms=3, color=color, label=label(rec))
        L, _ = shortest_wrong(h)
        if L is not None:
            yL = min(c.items(), key=lambda kv: abs(int(kv[0]) - L))[1]
            ax.plot([L], [yL], marker="x", ms=9, mew=2, color=color, ls="none")
        if rec["task"] not in chance_done:
            chance_done.add(rec["task"])
            ax.axhline(rec["chance"], color="gray", ls=":", lw=1)
            ax.text(xs[-1], rec["chance"] + 0.01, f"chance, {rec['task']}", ha="right", va="bottom", fontsize=7,
                    color="gray")
    tl = max(r["train_len"][1] for r in recs)
    ax.axvline(tl, color="red", ls="--", lw=1, label=f"longest training length {tl}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("length (letters)")
    ax.set_ylabel("accuracy after the last letter")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"DeltaProduct n_h=2, trained on the GPU (bf16); run on the CPU ({prec}); x: shortest wrong word",
                 fontsize=8)
    ax.legend(fontsize=7, loc="lower left", framealpha=0.8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def _acc(h: dict, L: int) -> str:
    v = h["accuracy_by_length"].get(str(L))
    return "-" if v is None else f"{v:.3f}"


def table(recs: list) -> str:
    rows = []
    for rec in recs:
        for prec, h in rec["horizon"].items():
            L, w = shortest_wrong(h)
            if h["horizon"] is not None:
                wrong = f"horizon {L}: {' '.join(w)}"
            elif L is not None:
                wrong = f"none <= {h['exhaustive_up_to']}; wrong at {L} (sampled)"
            else:
                wrong = f"none <= {h['exhaustive_up_to']}"
            longest = max(int(k) for k in h["accuracy_by_length"])
            ext = h.get("extraction") or {}
            iso = ("stopped" if ext.get("stopped") else "skipped") if h["isomorphic_to_target"] is None \
                else ("yes" if h["isomorphic_to_target"] else "no")
            rows.append([label(rec), prec, f"{rec['step']}/{rec['steps']}",
                         f"{h['exhaustive_up_to']} ({h['words_checked']} words)", wrong,
                         _acc(h, 64), _acc(h, 256), _acc(h, 1024), f"{_acc(h, longest)} at {longest}",
                         f"{h['extracted_states'] or '-'} vs {h['target_states']}", iso])
    return _record.table(["model", "precision", "step", "exhaustive up to", "shortest wrong word", "acc 64", "acc 256",
               "acc 1024", "acc longest", "extracted vs target states", "isomorphic"], rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="lrnnkit train --out run directories")
    ap.add_argument("--max-len", type=int, default=2048)
    ap.add_argument("--max-words", type=int, default=60000, help="exhaustive search budget (words)")
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--fp64-samples", type=int, default=64, help="0: no float64 curve")
    ap.add_argument("--margin-samples", type=int, default=64)
    ap.add_argument("--precisions", default="fp32,bf16", help="comma-separated: fp32, bf16 (CPU autocast)")
    ap.add_argument("--extract-seconds", type=float, default=60.0)
    ap.add_argument("--extract-queries", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="folder for one JSON per run")
    ap.add_argument("--plot", default=None,
                    help="PNG to draw (default: none; with --record, the committed docs/_static/"
                         "horizons_gpu_checkpoints.png, so that a look at a new checkpoint never redraws the docs' one)")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="keep a run's JSON already in --out (add what it lacks), "
                    "then plot and record")
    args = ap.parse_args(argv)
    args.precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
    if not args.precisions or set(args.precisions) - {"fp32", "bf16"}:
        ap.error(f"--precisions: fp32 and/or bf16 (got {args.precisions})")
    import torch
    torch.set_num_threads(1)
    from lrnnkit.fileio import atomic_write_text
    os.makedirs(args.out, exist_ok=True)
    recs = []
    for d in args.runs:
        path = os.path.join(args.out, os.path.basename(os.path.normpath(d)) + ".json")
        if args.reuse and os.path.exists(path):
            with open(path) as fh:
                rec = json.load(fh)
            if "drift" not in rec:          # written before the drift was measured
                from lrnnkit.learn.tasks import make_task
                from lrnnkit.learn.train import load_checkpoint
                rec["drift"] = reflection_drift(load_checkpoint(d)[1].eval(), make_task(rec["task"]))
        else:
            rec = analyse(d, args)
        atomic_write_text(path, json.dumps(rec, indent=1) + "\n")
        recs.append(rec)
    if args.plot is None and args.record:
        args.plot = PLOT
    if args.plot is not None:
        plot(recs, args.plot, args.precisions[0])
    body = table(recs)
    if not args.record:
        print(body)
    else:                       # record() prints the table
        notes = ("Checkpoints of examples/sweeps/train_gpu_carry.toml (DeltaProduct n_h = 2, width 128, 4 heads, one "
                 "layer, lengths 2..64, batch 128, lr 2e-3), step 2750 of 3000, trained and tested on an H100 under "
                 "bf16 autocast; here run on the CPU in float32 and under torch's CPU bf16 autocast (not the CUDA "
                 "kernels' numerics). Exhaustive search: every word up to the stated length; accuracy: after the last "
                 f"letter (not the all-positions token accuracy training reports), {args.samples} random words of "
                 f"length {args.max_len} read after every prefix; 'wrong at' is the shortest sampled wrong length, an "
                 f"upper bound on the horizon; extraction: L* with the target as teacher, at most "
                 f"{args.extract_seconds:g} s or {args.extract_queries} model runs. The float64 curve "
                 f"({args.fp64_samples} words), the logit margins and the per-letter transitions are in each run's "
                 "JSON in benchmarks/results/horizons/. Command: python "
                 "benchmarks/horizons_of_checkpoints.py RUN_DIR ... --max-len " + str(args.max_len) +
                 " --out benchmarks/results/horizons --record")
        _record.record(SECTION, body, notes)


if __name__ == "__main__":
    main()
