"""Evaluation as the papers plot it: accuracy per test length, far past the training length.

For a test length L, ``n`` words of exactly L tokens are drawn from the task's test stream
(:func:`lrnnkit.learn.tasks.batch_rng` with ``stream=1``, step = L: the same words for every model).

* ``accuracy[L]``: the fraction of supervised positions predicted right (001, Fig. 3's token accuracy);
* ``final_accuracy[L]``: the fraction of words whose LAST supervised position is right (one answer per word, as
  000, App. E.1 / Deletang et al. score the tasks);
* ``scaled_accuracy[L] = (final_accuracy[L] - chance) / (1 - chance)`` (000, Table 3 / Table 5: "1.0 perfect,
  0.0 random guessing"; ``chance = Acc_rand`` = 1 / number of output classes, App. E.1);
* ``prefix_accuracy[L_max]``: the accuracy at every position of the longest test words (000, App. E.2.1).

:func:`evaluate_mixture` scores one set of words whose lengths are drawn uniformly from a range (000, Fig. 4
caption: "8192 words of lengths uniform in 40..256"), from a third stream (``stream=2``).

:func:`eigenvalue_summary` summarises the spectra of the learned transition matrices on test words:
``min_real`` (the smallest real part of any eigenvalue) and ``fraction_negative`` (the fraction of eigenvalues with
real part below ``-1e-3``, the tolerance so that fp32 round-off of an eigenvalue 0 is not counted); ``None`` with
``nonfinite: True`` when a transition matrix is not finite (a diverged model).
"""
from __future__ import annotations

import numpy as np
import torch

from ..errors import InputError
from .tasks import IGNORE, batch_rng
from ..fileio import atomic_write_bytes

__all__ = ["evaluate", "evaluate_mixture", "mixture_lengths", "mixture_words", "scaled_accuracy",
           "eigenvalue_summary", "plot_accuracy", "plot_over_training"]

NEG_TOL = 1e-3


def scaled_accuracy(acc: float, chance: float) -> float:
    """000's metric: ``(acc - chance) / (1 - chance)`` (defined for ``chance < 1``: at least two classes)."""
    if not chance < 1.0:
        raise InputError(f"scaled accuracy needs at least two output classes (chance {chance!r} < 1)")
    return (acc - chance) / (1.0 - chance)


def _score(model, x, y, batch: int, device, autocast: bool) -> tuple:
    """``(right, supervised, final_right, right_at, supervised_at)`` of the words ``x`` (targets ``y``, numpy
    (n, T)) scored in batches of ``batch``: right / supervised positions, words whose last supervised position is
    right, and per position (int64 tensors of length T) the right and supervised counts."""
    right = tot = fin_right = 0
    right_at = torch.zeros(x.shape[1], dtype=torch.int64)
    tot_at = torch.zeros(x.shape[1], dtype=torch.int64)
    for i in range(0, x.shape[0], batch):
        xb = torch.as_tensor(x[i:i + batch], device=device)
        yb = torch.as_tensor(y[i:i + batch], device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast and xb.is_cuda):
            pred = model(xb).argmax(-1)
        m = yb != IGNORE
        hit = (pred == yb) & m
        right += int(hit.sum())
        tot += int(m.sum())
        right_at += hit.sum(0).cpu()
        tot_at += m.sum(0).cpu()
        # last supervised position of every word
        idx = (m.long() * torch.arange(m.shape[1], device=device)).argmax(1)
        rows = torch.arange(m.shape[0], device=device)
        fin_right += int((pred[rows, idx] == yb[rows, idx]).sum())
    return right, tot, fin_right, right_at, tot_at


@torch.no_grad()
def evaluate(model, task, lengths, *, n: int = 256, seed: int = 0, batch: int = 256, device="cpu",
             autocast: bool = False) -> dict:
    """``{"accuracy": {L: ..}, "final_accuracy": {L: ..}, "scaled_accuracy": {L: ..}, "prefix_accuracy": {L_max:
    [..]}}`` (module docstring); the keys of the inner dicts are the lengths as strings (JSON).

    ``prefix_accuracy[L_max][t]``: on the ``n`` words of the longest length, the fraction of supervised positions
    ``t`` (0-based) predicted right (``None`` where no word supervises ``t``). The models are causal, so the answer
    at ``t`` is the answer on the word's prefix of ``t + 1`` tokens: this is the accuracy read at every prefix
    length (000, App. E.2.1: '40K examples of length 500', Fig. 2's curve)."""
    model.eval()
    acc, fin, prefix = {}, {}, {}
    longest = max(int(L) for L in lengths)
    for L in lengths:
        x, y = task.sample(n, int(L), batch_rng(seed, int(L), stream=1))
        right, tot, fin_right, right_at, tot_at = _score(model, x, y, batch, device, autocast)
        acc[str(L)] = right / max(tot, 1)
        fin[str(L)] = fin_right / n
        if int(L) == longest:
            prefix[str(L)] = [int(r) / int(t) if int(t) else None for r, t in zip(right_at, tot_at)]
    model.train()
    return {"accuracy": acc, "final_accuracy": fin,
            "scaled_accuracy": {k: scaled_accuracy(v, task.chance) for k, v in fin.items()},
            "prefix_accuracy": prefix}


def mixture_lengths(n: int, lo: int, hi: int, seed: int = 0) -> np.ndarray:
    """The lengths of a test mixture: ``n`` draws uniform on ``lo..hi`` (inclusive) from the test stream
    ``batch_rng(seed, 0, stream=2)``, so every model is scored on the same words."""
    return batch_rng(seed, 0, stream=2).integers(int(lo), int(hi) + 1, size=int(n))


def mixture_words(task, n: int, lo: int, hi: int, seed: int = 0) -> list:
    """``[(L, x, y)]``: the mixture's words grouped by length (ascending), ``x`` / ``y`` the tokens and targets of
    its ``count(L)`` words of length L (:func:`mixture_lengths`), drawn from ``batch_rng(seed, L, stream=2)``
    (another stream than :func:`evaluate`'s per-length words)."""
    counts = np.bincount(mixture_lengths(n, lo, hi, seed) - int(lo), minlength=int(hi) - int(lo) + 1)
    out = []
    for off, c in enumerate(counts):
        if c:
            L = int(lo) + off
            x, y = task.sample(int(c), L, batch_rng(seed, L, stream=2))
            out.append((L, x, y))
    return out


@torch.no_grad()
def evaluate_mixture(model, task, n: int, lo: int, hi: int, *, seed: int = 0, batch: int = 256, device="cpu",
                     autocast: bool = False) -> dict:
    """The papers' test set as a mixture (000, Fig. 4 caption: '8192 words of lengths uniform in 40..256'): ``n``
    words, each length uniform on ``lo..hi`` (:func:`mixture_words`), scored as one set.

    ``final_accuracy`` = right last answers / ``n`` = ``sum_L count(L) final_L / n``, the per-length final
    accuracies weighted by how many words have each length; ``accuracy`` = right / supervised positions pooled
    over every word (weights: each length's supervised positions); ``scaled_accuracy`` = :func:`scaled_accuracy`
    of ``final_accuracy`` (000, Table 3). Also ``words``, ``lengths`` = ``[lo, hi]`` and ``count`` = {L: words}."""
    model.eval()
    right = tot = fin_right = 0
    count = {}
    for L, x, y in mixture_words(task, n, lo, hi, seed):
        r, t, f, _, _ = _score(model, x, y, batch, device, autocast)
        right, tot, fin_right = right + r, tot + t, fin_right + f
        count[str(L)] = int(x.shape[0])
    model.train()
    fin = fin_right / int(n)
    return {"words": int(n), "lengths": [int(lo), int(hi)], "accuracy": right / max(tot, 1), "final_accuracy": fin,
            "scaled_accuracy": scaled_accuracy(fin, task.chance), "count": count}


#: the largest sum of ``n^3`` over the matrices whose spectra :func:`eigenvalue_summary` computes per layer (about
#: two seconds of LAPACK): 003's matrix-state fixed-point layer has 1024 x 1024 transitions, and the 400 of them on
#: eight words of 50 tokens once took a GPU worker's whole device call on the CPU
EIG_COST = 2 ** 32


def _spread(m: int, k: int) -> torch.Tensor:
    """``k`` of the indices ``0..m-1``, evenly spaced, first and last included (all of them when ``k >= m``)."""
    if k >= m:
        return torch.arange(m)
    return torch.linspace(0, m - 1, max(1, k)).round().long().unique()


@torch.no_grad()
def eigenvalue_summary(model, task, *, length: int = 64, n: int = 8, seed: int = 0, device="cpu",
                       max_cost: int = EIG_COST) -> dict:
    """``{"min_real", "fraction_negative", "max_abs", "matrices", "of"}`` over the transition matrices of every
    layer on ``n`` test words of ``length`` tokens (module docstring). Per layer at most ``max_cost // d^3`` of its
    ``d x d`` matrices (at least one), evenly spaced over the words' tokens, have their spectra computed: ``matrices``
    says how many were, ``of`` how many there are (equal unless the layer's state is large)."""
    x, _ = task.sample(n, length, batch_rng(seed, 10**6 + length, stream=1))
    mats = model.transition_matrices(torch.as_tensor(x, device=device))
    if not all(bool(torch.isfinite(A).all()) for A in mats):
        # LAPACK refuses non-finite matrices (MKL's dgebal aborts the process); a diverged model is reported
        return {"min_real": None, "fraction_negative": None, "max_abs": None, "nonfinite": True}
    evs, used, total = [], 0, 0
    for A in mats:
        d = A.shape[-1]
        flat = A.reshape(-1, A.shape[-2], d)
        keep = _spread(flat.shape[0], max(1, int(max_cost) // d ** 3))
        evs.append(torch.linalg.eigvals(flat[keep.to(flat.device)].double().cpu()).reshape(-1))
        used, total = used + len(keep), total + flat.shape[0]
    ev = torch.cat(evs)
    re = ev.real
    return {"min_real": float(re.min()), "fraction_negative": float((re < -NEG_TOL).double().mean()),
            "max_abs": float(ev.abs().max()), "matrices": used, "of": total}


def _axes():
    """A figure and axes of the accuracy plots' size, on matplotlib's file-only backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=(6, 3.6))


def _save(fig, ax, path: str, *, xlabel: str, ylabel: str, title: str) -> None:
    """Label, legend and grid an accuracy plot (y from 0 to 1) and write it atomically as PNG or SVG (by the
    extension)."""
    import io

    import matplotlib.pyplot as plt
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="best", framealpha=0.7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg" if path.endswith(".svg") else "png", dpi=120)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def plot_over_training(curves: dict, path: str, *, title: str = "", ylabel: str = "accuracy") -> None:
    """Accuracy over training, one thin line per run and one bold line per configuration (the mean of its runs at
    each step they share): ``curves`` maps a configuration label to ``{run label: [(step, accuracy), ...]}``, e.g.
    the test accuracy at the longest length of each evaluation (``TrainConfig.eval_every``) for a paper that
    reports the best over training (002, Table 2 caption). Written atomically as PNG or SVG (by the extension)."""
    fig, ax = _axes()
    for i, (config, runs) in enumerate(curves.items()):
        colour = f"C{i % 10}"
        at: dict = {}
        for pts in runs.values():
            pts = sorted(pts)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, lw=0.7, alpha=0.45)
            for step, acc in pts:
                at.setdefault(step, []).append(acc)
        shared = sorted(k for k, v in at.items() if len(v) == len(runs))
        ax.plot(shared, [sum(at[k]) / len(at[k]) for k in shared], color=colour, lw=2,
                label=f"{config} (mean of {len(runs)})")
    _save(fig, ax, path, xlabel="training step", ylabel=ylabel, title=title)


def plot_accuracy(curves: dict, path: str, *, train_len: int | None = None, title: str = "",
                  ylabel: str = "accuracy") -> None:
    """Accuracy vs length, one line per entry of ``curves`` (label -> {length: acc}); the longest training length
    dashed (as the papers mark it). Written atomically as PNG or SVG (by the extension)."""
    fig, ax = _axes()
    for label, c in curves.items():
        xs = sorted(int(k) for k in c)
        ax.plot(xs, [c[str(k)] if str(k) in c else c[k] for k in xs], marker="o", ms=3, label=label)
    if train_len:
        ax.axvline(train_len, color="red", ls="--", lw=1, label=f"train length {train_len}")
    _save(fig, ax, path, xlabel="sequence length", ylabel=ylabel, title=title)
