"""Float weights against exact weights: the check that a certificate of a model's exact weights covers what the
backends execute.

A model keeps float64 arrays (what every backend runs) and, where the math is exact, exact values beside them
(:mod:`lrnnkit.model.layer`). The two agree when every float array is the float64 rounding of its exact form; then
a certificate of the exact weights (lrnnkit.certify) covers the floats too. :func:`canonicalize_floats` makes the
floats that rounding (it runs on every :class:`~lrnnkit.model.ir.Model` as it is built or loaded) and reports what
the given floats got wrong; :func:`consistency_problems` lists everything that keeps a certificate from covering the
floats, including, exactly, every GH letter matrix against the product of its factors (paper 000, eq. 1 and
Proposition 1: ``A = G_n ... G_1``, each ``G = I - beta u u^T / (u^T u)``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..exact import Cyc, exact_to_json, sign, to_float
from .layer import LAYER_KINDS
from .linalg import exact_factor_product, gh_matrix_float, is_zero_exact, short_value

__all__ = ["canonicalize_floats", "consistency_problems", "CONSISTENCY_TOL", "MAX_PROBLEMS"]

CONSISTENCY_TOL = 1e-9
"""Relative tolerance for "the stored float equals the rounding of its exact form": compiled files store products of
GH factors computed in float64, a few ulps (~1e-15) off the correctly rounded exact product; a tampered or corrupted
weight is off by far more. The floats are then replaced by the exact rounding, so the tolerance only decides what is
reported, never what runs."""
MAX_PROBLEMS = 8  # problems listed per model (the count of the rest is given)


class _Rounder:
    """float64 rounding of exact values (memoized; values repeat a lot). Out of range or non-real: InputError."""

    def __init__(self):
        self.cache: dict = {}

    def __call__(self, x) -> float:
        try:
            return self.cache[x]
        except KeyError:
            pass
        try:
            v = to_float(x)
        except OverflowError:
            raise InputError(f"exact value {short_value(exact_to_json(x))} lies outside the float64 range "
                             f"(|x| < {np.finfo(np.float64).max:.4g})") from None
        except ValueError as exc:
            raise InputError(f"exact value {short_value(exact_to_json(x))}: {exc}") from None
        if not np.isfinite(v):
            raise InputError(f"exact value {short_value(exact_to_json(x))} lies outside the float64 range")
        self.cache[x] = v
        return v

    def array(self, x, name: str = "") -> np.ndarray:
        try:
            if x and isinstance(x[0], (list, tuple)):
                return np.array([self.array(r) for r in x], dtype=np.float64)
            return np.array([self(v) for v in x], dtype=np.float64)
        except InputError as exc:
            if not name:
                raise
            raise InputError(f"{name}: {exc}") from None


def _unit_key(u: Sequence) -> np.ndarray:
    """u / ||u|| rounded to float64 (evaluated with 40 digits: u^T u is rational, the square root is not)."""
    import mpmath
    with mpmath.workdps(40):
        vals = [x.to_mpc(40).real if isinstance(x, Cyc) else mpmath.mpf(x.numerator) / x.denominator for x in u]
        n = mpmath.sqrt(mpmath.fsum(v * v for v in vals))
        if n == 0:
            raise InputError("GH factor with a zero key")
        return np.array([float(v / n) for v in vals], dtype=np.float64)


def _exact_in(x, lo, hi) -> bool:
    return sign(x - lo) >= 0 and sign(hi - x) >= 0


def _float_problems(model, fix: bool) -> list:
    """Compare every float array with the rounding of its exact form; with ``fix``, replace the floats by it.
    Also checks what can be checked on the floats alone: betas in [0, 2] (exactly where exact), unit keys, the
    float product of GH factors against the letter matrix, diagonal layers diagonal."""
    R = _Rounder()
    keys: dict = {}   # unit keys by exact key (keys repeat: S6 has 4320 factors over 15 keys)
    probs: list = []

    def cmp(name: str, given, canon: np.ndarray):
        given = np.asarray(given, dtype=np.float64)
        if given.shape != canon.shape:
            probs.append(f"{name}: float array of shape {given.shape}, its exact form has shape {canon.shape}")
            return
        bad = np.abs(given - canon) > CONSISTENCY_TOL * (1 + np.abs(canon))
        if bad.any():
            idx = tuple(int(k) for k in np.argwhere(bad)[0])
            probs.append(f"{name}: the float weights are not the rounding of the exact ones ({int(bad.sum())} "
                         f"entr{'y' if bad.sum() == 1 else 'ies'}; at {list(idx)}: {float(given[idx])!r}, exact "
                         f"{float(canon[idx])!r})")

    def sync(obj, attr: str, exact, label: str) -> None:
        """Compare ``obj.attr`` with the float64 rounding of ``exact`` (when given); with ``fix``, replace it."""
        if exact is None:
            return
        canon = R.array(exact, f"{label}_exact")
        cmp(label, getattr(obj, attr), canon)
        if fix:
            setattr(obj, attr, canon)

    for i, L in enumerate(model.layers):
        w = f"layer {i}"
        d = L.width
        for j, t in enumerate(L.transitions):
            tw = f"{w} symbol {j}"
            sync(t, "A", t.A_exact, f"{tw} A")
            sync(t, "B", t.B_exact, f"{tw} B")
            for k, f in enumerate(t.factors or []):
                fw = f"{tw} GH factor {k}"
                if f.beta_exact is not None:
                    if not _exact_in(f.beta_exact, 0, 2):
                        probs.append(f"{fw}: beta = {short_value(exact_to_json(f.beta_exact))} is outside [0, 2]")
                    cb = R(f.beta_exact)
                    if abs(f.beta - cb) > CONSISTENCY_TOL * (1 + abs(cb)):
                        probs.append(f"{fw}: float beta {f.beta!r} is not the rounding of the exact {cb!r}")
                    if fix:
                        f.beta = cb
                elif not (0 <= f.beta <= 2):
                    probs.append(f"{fw}: beta = {f.beta!r} is outside [0, 2]")
                if f.u_exact is not None:
                    try:
                        ukey = tuple(f.u_exact)
                        cv = keys.get(ukey)
                        if cv is None:
                            cv = keys[ukey] = _unit_key(f.u_exact)
                    except InputError as exc:
                        probs.append(f"{fw}: {exc}")
                    else:
                        v = np.asarray(f.v, dtype=np.float64)
                        if v.shape != cv.shape or min(np.abs(v - cv).max(), np.abs(v + cv).max()) > CONSISTENCY_TOL:
                            probs.append(f"{fw}: float key v is not u_exact / ||u_exact||")
                        if fix:
                            f.v = cv
                if abs(float(np.linalg.norm(f.v)) - 1) > CONSISTENCY_TOL:
                    probs.append(f"{fw}: the key v is not a unit vector (||v|| = {float(np.linalg.norm(f.v))!r})")
            if t.factors is not None:
                P = np.eye(d)
                for f in t.factors:
                    P = gh_matrix_float(f.beta, f.v) @ P
                if np.abs(P - t.A).max(initial=0) > 1e-9 * max(1, len(t.factors)):
                    probs.append(f"{tw}: the product of its GH factors is not its matrix A")
            if L.kind == "diagonal":
                if t.A_exact is not None and any(not is_zero_exact(t.A_exact[a][b])
                                                 for a in range(d) for b in range(d) if a != b):
                    probs.append(f"{tw}: a diagonal layer with an off-diagonal exact entry in A_exact")
                if np.any(t.A[~np.eye(d, dtype=bool)] != 0):
                    probs.append(f"{tw}: a diagonal layer with an off-diagonal float entry in A")
                if t.diag is not None:
                    cmp(f"{tw} diag", t.diag, np.diag(t.A).copy())
                    if fix:
                        t.diag = np.diag(t.A).copy()
            if t.blocks is not None:
                sizes = [np.shape(b) for b in t.blocks]
                if any(len(sz) != 2 or sz[0] != sz[1] for sz in sizes) or sum(sz[0] for sz in sizes) != d:
                    probs.append(f"{tw}: blocks of shapes {sizes} do not tile a width-{d} matrix")
                else:
                    M = np.zeros((d, d))
                    o = 0
                    for b in t.blocks:
                        n = np.shape(b)[0]
                        M[o:o + n, o:o + n] = b
                        o += n
                    cmp(f"{tw} blocks", M, t.A)
        sync(L, "H0", L.H0_exact, f"{w} H0")
        sync(L.decoder, "W", L.decoder.W_exact, f"{w} decoder W")
        sync(L.decoder, "c", L.decoder.c_exact, f"{w} decoder c")
    return probs


def canonicalize_floats(model) -> list:
    """Make the float64 arrays of ``model`` the rounding of its exact weights, where these exist (A, B, H0, decoder
    W and c, GH betas and unit keys u / ||u||, diagonals), so that every backend executes the same float weights and
    a certificate of the exact weights covers them. Returns what the given floats got wrong (a list of one-line
    problems, empty for a consistent model). Called by ``Model.__post_init__``; the certifier refuses a model with
    problems (see :func:`consistency_problems`)."""
    return _float_problems(model, fix=True)


def consistency_problems(model) -> list:
    """Everything that keeps a certificate of the exact weights from covering what the backends execute: the
    problems found on construction / loading (``model.inconsistencies``), the floats changed since, and, exactly,
    every GH letter matrix A_exact against the product of its exact factors (000, eq. 1 and Proposition 1: a GH
    layer runs ``A = G_n ... G_1``, each ``G = I - beta u u^T / (u^T u)``). Empty iff consistent."""
    probs = list(getattr(model, "inconsistencies", []) or [])
    for p in _float_problems(model, fix=False):
        if p not in probs:
            probs.append(p)
    for i, L in enumerate(model.layers):
        if L.kind not in LAYER_KINDS:
            probs.append(f"layer {i}: kind {L.kind!r} is not one the certifier knows ({', '.join(LAYER_KINDS)})")
            continue
        for j, t in enumerate(L.transitions):
            if t.factors is None or t.A_exact is None:
                continue
            if L.kind == "gh" and any(f.beta_exact is None or f.u_exact is None for f in t.factors):
                probs.append(f"layer {i} symbol {j}: GH factors without exact forms beside an exact A")
                continue
            if any(f.beta_exact is None or f.u_exact is None for f in t.factors):
                continue
            try:
                M = exact_factor_product(t.factors, L.width)
            except InputError as exc:
                probs.append(f"layer {i} symbol {j}: {exc}")
                continue
            if M != [list(r) for r in t.A_exact]:
                probs.append(f"layer {i} symbol {j}: A_exact is not the product of its exact GH factors")
    return probs

