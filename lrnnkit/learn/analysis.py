"""What did it learn? Spectra of the learned transition matrices, the betas per head, and PCA of the keys.

For an LRNN ``H_t = A(x_t) H_{t-1} + B(x_t)`` (000, eq. 1), state tracking of a non-solvable or even just of a
non-trivial group needs transition matrices with negative eigenvalues (000, Theorems 1-2: with spectra in
[0, 1] parity is impossible in finite precision; Theorem 3 / Proposition 1: products of generalized Householder
matrices ``I - beta k k^T`` with ``beta in [0, 2]`` reach eigenvalue ``1 - beta = -1`` at ``beta = 2``, a
reflection). 001 (DeltaProduct), Section 5 / Fig. 5 reads trained models the same way: which heads put ``beta``
near 2 (reflections), and a PCA of the keys, where S_4 and A_5 models put their keys in a 3-dimensional subspace:
the groups act as rotations of R^3 (SO(3)), each rotation a product of two reflections.

Three summaries, each over the tokens of some words (the transitions of a trained model depend on the context
through the short convolutions, so they are sampled on words, and grouped by the letter read):

* :func:`spectrum_summary` -- eigenvalues of a stack of matrices: ``min_real``, ``fraction_negative`` (real part
  below ``-tol``), ``negative_per_matrix`` (how many negative eigenvalues a matrix has, on average),
  ``closest_to_minus_one`` (``min |lambda + 1|``), ``fraction_near_minus_one`` (``|lambda + 1| <= near``),
  ``max_abs``;
* :func:`beta_summary` -- per head: mean / median beta, fraction above 1 (negative eigenvalue ``1 - beta``),
  fraction at least ``2 - near2`` ("beta near 2", 001 Fig. 5), and the heads that use reflections;
* :func:`key_pca` -- per head, the explained-variance ratios of the (centred) keys and the number of components
  that explain 95% / 99% of the variance.

:func:`analyze` runs all three on a trained :class:`~lrnnkit.learn.models.SequenceModel` (through its
``transition_matrices`` / ``betas`` / ``keys``) and :func:`analyze_compiled` on a compiled lrnnkit
:class:`~lrnnkit.model.ir.Model` (letter matrices, GH factors), so a trained model and the certified construction for
the same automaton are read with the same numbers.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..model import Model

__all__ = ["spectrum_summary", "beta_summary", "key_pca", "analyze", "analyze_compiled", "NEG_TOL"]

NEG_TOL = 1e-3     # an eigenvalue counts as negative below -NEG_TOL (fp32 round-off of 0 is ~1e-7, far inside)
NEAR = 0.05        # |lambda + 1| <= NEAR: "close to -1"; beta >= 2 - NEAR: "beta near 2"


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().to("cpu").double().numpy()
    return np.asarray(x, dtype=np.float64)


def spectrum_summary(mats, *, tol: float = NEG_TOL, near: float = NEAR) -> dict:
    """Eigenvalue statistics of a stack of square matrices ``(..., n, n)`` (module docstring). Eigenvalues by
    LAPACK (``numpy.linalg.eigvals``) in float64."""
    A = _np(mats)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise InputError(f"spectrum_summary: expected square matrices (..., n, n), got shape {A.shape}")
    A = A.reshape(-1, A.shape[-1], A.shape[-1])
    if A.shape[0] == 0:
        raise InputError("spectrum_summary: no matrices")
    ev = np.linalg.eigvals(A)                       # (N, n) complex
    re = ev.real
    dist = np.abs(ev + 1.0)
    return {"matrices": int(A.shape[0]), "n": int(A.shape[-1]), "min_real": float(re.min()),
            "fraction_negative": float((re < -tol).mean()),
            "negative_per_matrix": float((re < -tol).sum(1).mean()),
            "closest_to_minus_one": float(dist.min()), "fraction_near_minus_one": float((dist <= near).mean()),
            "max_abs": float(np.abs(ev).max())}


def beta_summary(betas, *, near2: float = NEAR) -> dict:
    """``betas`` (..., n_h, H) (a model's ``betas``; the leading axes are tokens): per head ``mean``, ``median``,
    ``fraction_above_1`` (the factor's eigenvalue ``1 - beta`` is negative), ``fraction_near_2``
    (``beta >= 2 - near2``: a reflection, 001 Fig. 5), and ``reflection_heads``: the heads whose median is near 2."""
    b = _np(betas)
    if b.ndim < 2:
        raise InputError(f"beta_summary: expected (..., n_h, H), got shape {b.shape}")
    H = b.shape[-1]
    flat = b.reshape(-1, H)
    heads = []
    for h in range(H):
        x = flat[:, h]
        heads.append({"head": h, "mean": float(x.mean()), "median": float(np.median(x)),
                      "min": float(x.min()), "max": float(x.max()),
                      "fraction_above_1": float((x > 1.0 + NEG_TOL).mean()),
                      "fraction_near_2": float((x >= 2.0 - near2).mean())})
    return {"heads": heads, "reflection_heads": [d["head"] for d in heads if d["median"] >= 2.0 - near2],
            "fraction_near_2": float((flat >= 2.0 - near2).mean()),
            "fraction_above_1": float((flat > 1.0 + NEG_TOL).mean())}


def _pca(X: np.ndarray) -> dict:
    # PCA by SVD of the centred data (three lines of numpy; scikit-learn is not a dependency of lrnnkit)
    Xc = X - X.mean(0, keepdims=True)
    s = np.linalg.svd(Xc, compute_uv=False)
    var = s ** 2
    tot = var.sum()
    ratio = var / tot if tot > 0 else np.zeros_like(var)
    cum = np.cumsum(ratio)

    def need(f):
        return int(np.searchsorted(cum, f - 1e-12) + 1) if tot > 0 else 0

    return {"explained_variance_ratio": [float(r) for r in ratio], "components_95": need(0.95),
            "components_99": need(0.99), "samples": int(X.shape[0]), "dim": int(X.shape[1])}


def key_pca(keys, *, per_factor: bool = False) -> dict:
    """``keys`` (..., n_h, H, K) unit keys: per head, PCA of all its keys (every token, every factor; or per factor
    with ``per_factor``). Returns ``{"heads": [{"head", "explained_variance_ratio", "components_95",
    "components_99", ...}], "components_99_max": ...}``."""
    k = _np(keys)
    if k.ndim < 3:
        raise InputError(f"key_pca: expected (..., n_h, H, K), got shape {k.shape}")
    n_h, H, K = k.shape[-3:]
    k = k.reshape(-1, n_h, H, K)
    heads = []
    for h in range(H):
        d = {"head": h, **_pca(k[:, :, h].reshape(-1, K))}
        if per_factor:
            d["factors"] = [_pca(k[:, j, h]) for j in range(n_h)]
        heads.append(d)
    return {"heads": heads, "components_99_max": max(d["components_99"] for d in heads),
            "components_95_max": max(d["components_95"] for d in heads)}


def analyze(model, words, *, letters: Sequence[str] | None = None, pad_id: int | None = None,
            device="cpu") -> dict:
    """Read a trained :class:`~lrnnkit.learn.models.SequenceModel` on ``words`` ((B, T) token ids).

    Returns ``{"layers": [{"eigenvalues": spectrum_summary over all its matrices, "per_letter": {letter:
    spectrum_summary}, "betas": beta_summary | None, "key_pca": key_pca | None}], "eigenvalues": overall}``;
    positions holding ``pad_id`` are left out. ``letters`` names the token ids (default ``"0", "1", ...``)."""
    import torch
    x = torch.as_tensor(np.asarray(words), dtype=torch.long, device=device)
    if x.ndim != 2:
        raise InputError(f"analyze: words must be (B, T) token ids, got shape {tuple(x.shape)}")
    tok = x.cpu().numpy()
    keep = np.ones_like(tok, dtype=bool) if pad_id is None else tok != pad_id
    vocab = int(model.config.get("vocab", tok.max() + 1)) if hasattr(model, "config") else int(tok.max() + 1)
    names = list(letters) if letters is not None else [str(i) for i in range(vocab)]
    mats = model.transition_matrices(x)
    gh = getattr(model, "config", {}).get("layer") in ("deltanet", "deltaproduct")
    betas = model.betas(x) if gh else None
    keys = model.keys(x) if gh else None
    layers = []
    all_m = []
    for i, A in enumerate(mats):
        A = _np(A)                                            # (B, T, H, n, n)
        Ak = A[keep]                                          # (N, H, n, n)
        tk = tok[keep]
        all_m.append(Ak.reshape(-1, Ak.shape[-1], Ak.shape[-1]))
        per_letter = {}
        for a, name in enumerate(names):
            sel = Ak[tk == a]
            if sel.size:
                per_letter[name] = spectrum_summary(sel)
        entry = {"eigenvalues": spectrum_summary(Ak), "per_letter": per_letter, "betas": None, "key_pca": None}
        if gh:
            entry["betas"] = beta_summary(_np(betas[i])[keep])
            entry["key_pca"] = key_pca(_np(keys[i])[keep])
        layers.append(entry)
    overall = spectrum_summary(np.concatenate([m for m in all_m if m.shape[-1] == all_m[0].shape[-1]])) \
        if len({m.shape[-1] for m in all_m}) == 1 else None
    return {"layers": layers, "eigenvalues": overall}


def analyze_compiled(model) -> dict:
    """The same summaries for a compiled lrnnkit :class:`~lrnnkit.model.ir.Model`: per layer the letter matrices'
    spectra (per layer symbol), and for ``gh`` layers the factors' betas and keys (one 'head' per layer; tokens =
    layer symbols, factors padded with nothing: each symbol contributes its own factors)."""
    if not isinstance(model, Model):
        raise InputError(f"analyze_compiled expects an lrnnkit Model, got {type(model).__name__}")
    layers = []
    for L in model.layers:
        A = L.A_stack()
        names = L.symbol_names or [str(s) for s in range(L.n_symbols)]
        per = {str(names[s]): spectrum_summary(A[s]) for s in range(L.n_symbols)}
        entry = {"eigenvalues": spectrum_summary(A), "per_letter": per, "betas": None, "key_pca": None}
        if L.kind == "gh":
            bs = np.array([f.beta for t in L.transitions for f in (t.factors or [])], dtype=np.float64)
            ks = np.array([f.v for t in L.transitions for f in (t.factors or [])], dtype=np.float64)
            if bs.size:
                entry["betas"] = beta_summary(bs.reshape(-1, 1, 1))
                entry["key_pca"] = key_pca(ks.reshape(-1, 1, 1, L.width))
        layers.append(entry)
    return {"layers": layers, "eigenvalues": spectrum_summary(np.concatenate(
        [L.A_stack() for L in model.layers])) if len(set(model.widths)) == 1 else None}
