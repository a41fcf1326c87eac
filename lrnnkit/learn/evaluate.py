"""Evaluation as the papers plot it: accuracy per test length, far past the training length.

For a test length L, ``n`` words of exactly L tokens are drawn from the task's test stream
(:func:`lrnnkit.learn.tasks.batch_rng` with ``stream=1``, step = L: the same words for every model).

* ``accuracy[L]``: the fraction of supervised positions predicted right (001, Fig. 3's token accuracy);
* ``final_accuracy[L]``: the fraction of words whose LAST supervised position is right (one answer per word, as
  000, App. E.1 / Deletang et al. score the tasks);
* ``scaled_accuracy[L] = (final_accuracy[L] - chance) / (1 - chance)`` (000, Table 3 / Table 5: "1.0 perfect,
  0.0 random guessing"; ``chance = Acc_rand`` = 1 / number of output classes, App. E.1).

:func:`eigenvalue_summary` summarises the spectra of the learned transition matrices on test words:
``min_real`` (the smallest real part of any eigenvalue) and ``fraction_negative`` (the fraction of eigenvalues with
real part below ``-1e-3``, the tolerance so that fp32 round-off of an eigenvalue 0 is not counted); ``None`` with
``nonfinite: True`` when a transition matrix is not finite (a diverged model).
"""
from __future__ import annotations

import torch

from ..errors import InputError
from .tasks import IGNORE, batch_rng
from ..fileio import atomic_write_bytes

__all__ = ["evaluate", "scaled_accuracy", "eigenvalue_summary", "plot_accuracy"]

NEG_TOL = 1e-3


def scaled_accuracy(acc: float, chance: float) -> float:
    """000's metric: ``(acc - chance) / (1 - chance)`` (defined for ``chance < 1``: at least two classes)."""
    if not chance < 1.0:
        raise InputError(f"scaled accuracy needs at least two output classes (chance {chance!r} < 1)")
    return (acc - chance) / (1.0 - chance)


@torch.no_grad()
def evaluate(model, task, lengths, *, n: int = 256, seed: int = 0, batch: int = 256, device="cpu",
             autocast: bool = False) -> dict:
    """``{"accuracy": {L: ..}, "final_accuracy": {L: ..}, "scaled_accuracy": {L: ..}}`` (module docstring);
    the keys of the inner dicts are the lengths as strings (JSON)."""
    model.eval()
    acc, fin = {}, {}
    for L in lengths:
        x, y = task.sample(n, int(L), batch_rng(seed, int(L), stream=1))
        right = tot = 0
        fin_right = 0
        for i in range(0, n, batch):
            xb = torch.as_tensor(x[i:i + batch], device=device)
            yb = torch.as_tensor(y[i:i + batch], device=device)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast and xb.is_cuda):
                pred = model(xb).argmax(-1)
            m = yb != IGNORE
            right += int(((pred == yb) & m).sum())
            tot += int(m.sum())
            # last supervised position of every word
            idx = (m.long() * torch.arange(m.shape[1], device=device)).argmax(1)
            rows = torch.arange(m.shape[0], device=device)
            fin_right += int((pred[rows, idx] == yb[rows, idx]).sum())
        acc[str(L)] = right / max(tot, 1)
        fin[str(L)] = fin_right / n
    model.train()
    return {"accuracy": acc, "final_accuracy": fin,
            "scaled_accuracy": {k: scaled_accuracy(v, task.chance) for k, v in fin.items()}}


@torch.no_grad()
def eigenvalue_summary(model, task, *, length: int = 64, n: int = 8, seed: int = 0, device="cpu") -> dict:
    """``{"min_real", "fraction_negative", "max_abs"}`` over every transition matrix of every layer on ``n``
    test words of ``length`` tokens (module docstring)."""
    x, _ = task.sample(n, length, batch_rng(seed, 10**6 + length, stream=1))
    mats = model.transition_matrices(torch.as_tensor(x, device=device))
    if not all(bool(torch.isfinite(A).all()) for A in mats):
        # LAPACK refuses non-finite matrices (MKL's dgebal aborts the process); a diverged model is reported
        return {"min_real": None, "fraction_negative": None, "max_abs": None, "nonfinite": True}
    ev = torch.cat([torch.linalg.eigvals(A.double().cpu().reshape(-1, A.shape[-2], A.shape[-1])).reshape(-1)
                    for A in mats])
    re = ev.real
    return {"min_real": float(re.min()), "fraction_negative": float((re < -NEG_TOL).double().mean()),
            "max_abs": float(ev.abs().max())}


def plot_accuracy(curves: dict, path: str, *, train_len: int | None = None, title: str = "",
                  ylabel: str = "accuracy") -> None:
    """Accuracy vs length, one line per entry of ``curves`` (label -> {length: acc}); the longest training length
    dashed (as the papers mark it). Written atomically as PNG or SVG (by the extension)."""
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, c in curves.items():
        xs = sorted(int(k) for k in c)
        ax.plot(xs, [c[str(k)] if str(k) in c else c[k] for k in xs], marker="o", ms=3, label=label)
    if train_len:
        ax.axvline(train_len, color="red", ls="--", lw=1, label=f"train length {train_len}")
    ax.set_xlabel("sequence length")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="best", framealpha=0.7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fmt = "svg" if path.endswith(".svg") else "png"
    fig.savefig(buf, format=fmt, dpi=120)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
