"""Products of generalized Householder (GH) matrices as a library (paper 000, Proposition 1.2 and its proof in
Appendix C.1; paper 001, Lemma 1).

A GH factor is ``G(beta, u) = I - beta u u^T / (u^T u)``; a list of factors ``[G_1, ..., G_r]`` stands for the
product ``G_r ... G_1`` (later factor on the left, DeltaProduct's order, lrnnkit.model).

* :func:`orthogonal_factors` -- any orthogonal ``Q`` is a product of at most ``n`` reflections (``beta = 2``;
  Cartan-Dieudonne, the "n-reflections theorem" cited by 000, App. C.1). Method: reduce ``Q`` column by column
  (Householder): if column i of the current matrix is ``x != e_i``, the reflection along ``u = x - e_i`` sends it to
  ``e_i`` and fixes ``e_0, ..., e_{i-1}``; then ``R_k ... R_1 Q = I`` and ``Q = R_1 ... R_k``. Exact (Fraction /
  cyclotomic) when the entries are exact and every ``u^T u = 2 - 2 x_i`` is rational (always for rational Q);
  float64 otherwise.
* :func:`permutation_factors` -- a permutation matrix with ``c`` non-trivial cycles moving ``m`` points is a product
  of ``m - c <= n - 1`` transposition reflections ``G(2, e_i - e_j)`` (000, App. C.1).
* :func:`contraction_factors` -- any ``M`` with ``||M||_2 <= 1`` is a product of at most ``3n`` GH factors with
  eigenvalues in ``[-1, 1]`` (000, Proposition 1.2): ``M = U S V^T`` (SVD), ``U`` and ``V^T`` by
  :func:`orthogonal_factors` (``<= n`` each) and ``S = prod_i (I - (1 - sigma_i) e_i e_i^T)`` (``n`` factors with
  ``beta = 1 - sigma_i in [0, 1]``). Float64 (numpy's SVD): singular values are roots of high-degree polynomials
  in general, so no exact form exists in our fields; the reconstruction error is bounded by ~ 10 n eps ||M||.
  :func:`diagonal_factors` is the exact diagonal part.
* :func:`collapse_same_key` -- 001, Lemma 1: ``prod_j (I - alpha_j k k^T) = I - alpha* k k^T`` with
  ``alpha* = (1 - prod_j (1 - alpha_j s)) / s``, ``s = k^T k`` (the factors commute; the paper proves existence
  only, the closed form is ours). Exact for exact inputs.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..exact import Cyc, to_exact
from ..model.layer import GHFactor
from ..model.linalg import exact_identity, exact_matmul, gh_matrix_exact
from .permutation_reflections import permutation_factors  # noqa: F401  (re-exported: 000, App. C.1)

__all__ = ["orthogonal_factors", "permutation_factors", "contraction_factors", "diagonal_factors",
           "collapse_same_key", "product_exact", "product_float"]

FLOAT_TOL = 1e-10   # float64 inputs: orthogonality / norm tolerance (inputs typically come from QR / SVD, ~1e-15)


def product_exact(factors: Sequence[GHFactor], n: int) -> list:
    """``G_r ... G_1`` exactly."""
    A = exact_identity(n)
    for f in factors:
        A = exact_matmul(f.matrix_exact(), A)
    return A


def product_float(factors: Sequence[GHFactor], n: int) -> np.ndarray:
    A = np.eye(n)
    for f in factors:
        A = f.matrix() @ A
    return A


def _is_exact_matrix(M) -> bool:
    return isinstance(M, (list, tuple)) and all(
        isinstance(x, (int, Fraction, Cyc)) and not isinstance(x, bool) for r in M for x in r)


def orthogonal_factors(Q, exact: bool | None = None) -> list[GHFactor]:
    """At most n reflections whose product ``G_r ... G_1`` equals the orthogonal matrix Q (see module docstring).

    ``Q``: a list of rows of exact values (int / Fraction / Cyc) or a float array. ``exact``: default = whether Q
    is given exactly. Raises InputError if Q is not orthogonal (exactly, or within 1e-10 in float64)."""
    if exact is None:
        exact = _is_exact_matrix(Q)
    if exact:
        M = [[to_exact(x) for x in r] for r in Q]
        n = len(M)
        if any(len(r) != n for r in M):
            raise InputError(f"orthogonal_factors: Q must be square, got rows of lengths {[len(r) for r in M]}")
        QtQ = exact_matmul([list(c) for c in zip(*M)], M)
        if QtQ != exact_identity(n):
            raise InputError("orthogonal_factors: Q^T Q != I exactly; Q is not orthogonal")
        Rs = []
        for i in range(n):
            x = [M[r][i] for r in range(n)]
            u = [x[r] - (1 if r == i else 0) for r in range(n)]
            if all(v == 0 for v in u):
                continue
            nrm = sum((v * v for v in u), Fraction(0))
            if isinstance(nrm, Cyc):
                raise InputError(f"orthogonal_factors: column {i} needs a reflection with irrational |u|^2 = "
                                 f"2 - 2 Q[{i}][{i}]; use exact=False")
            f = GHFactor.exact(2, u)
            M = exact_matmul(f.matrix_exact(), M)
            Rs.append(f)
        assert M == exact_identity(n)
        return list(reversed(Rs))           # Q = R_1 ... R_k, i.e. first R_k, last R_1
    A = np.asarray(Q, dtype=np.float64)
    n = A.shape[0]
    if A.ndim != 2 or A.shape != (n, n):
        raise InputError(f"orthogonal_factors: Q must be square, got shape {A.shape}")
    if not np.allclose(A.T @ A, np.eye(n), atol=FLOAT_TOL):
        raise InputError(f"orthogonal_factors: Q^T Q differs from I by {np.abs(A.T @ A - np.eye(n)).max():.3g} "
                         f"> {FLOAT_TOL}")
    Rs = []
    M = A.copy()
    for i in range(n):
        x = M[:, i].copy()
        x[:i] = 0.0                       # exactly zero in exact arithmetic; drop rounding residue
        u = x.copy()
        u[i] -= 1.0
        nu = np.linalg.norm(u)
        if nu <= 1e-14:
            continue
        v = u / nu
        M = M - 2.0 * np.outer(v, v @ M)
        Rs.append(GHFactor(2.0, v))
    return list(reversed(Rs))


def diagonal_factors(diag: Sequence, exact: bool = True) -> list[GHFactor]:
    """``diag(d) = prod_i (I - (1 - d_i) e_i e_i^T)``; entries must lie in [-1, 1] (then beta = 1 - d_i in [0, 2])."""
    n = len(diag)
    out = []
    for i, d in enumerate(diag):
        if exact:
            d = to_exact(d)
            if isinstance(d, Cyc):
                raise InputError("diagonal_factors: entries must be rational for the exact form")
        if not -1 <= d <= 1:
            raise InputError(f"diagonal_factors: entry {i} = {d} outside [-1, 1]")
        if d == 1:
            continue
        e = [Fraction(int(j == i)) for j in range(n)]
        out.append(GHFactor.exact(1 - d, e) if exact else GHFactor(float(1 - d), np.array(e, dtype=float)))
    return out


def contraction_factors(M, tol: float = FLOAT_TOL) -> list[GHFactor]:
    """At most 3n GH factors (eigenvalues in [-1, 1]) whose product is M, for ``||M||_2 <= 1`` (000, Prop. 1.2;
    float64 SVD, see the module docstring)."""
    A = np.asarray(M, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise InputError(f"contraction_factors: M must be square, got shape {A.shape}")
    n = A.shape[0]
    U, s, Vt = np.linalg.svd(A)
    if s.size and s[0] > 1 + tol:
        raise InputError(f"contraction_factors: ||M||_2 = {s[0]!r} > 1")
    s = np.minimum(s, 1.0)
    fac = orthogonal_factors(Vt, exact=False)
    fac += [GHFactor(float(1 - si), np.eye(n)[i]) for i, si in enumerate(s) if si != 1.0]
    fac += orthogonal_factors(U, exact=False)
    return fac


def collapse_same_key(alphas: Sequence, k: Sequence):
    """001, Lemma 1: ``(alpha*, k)`` with ``prod_j (I - alpha_j k k^T) = I - alpha* k k^T`` (exact for exact
    inputs; k need not be unit)."""
    exact = all(isinstance(x, (int, Fraction, Cyc)) for x in list(alphas) + list(k))
    if exact:
        k = [to_exact(x) for x in k]
        s = sum((x * x for x in k), Fraction(0))
        if isinstance(s, Cyc):
            raise InputError("collapse_same_key: k^T k must be rational for the exact form")
        if s == 0:
            raise InputError("collapse_same_key: k must be nonzero")
        p = Fraction(1)
        for a in alphas:
            p = p * (1 - to_exact(a) * s)
        return (1 - p) / s, k
    kf = np.asarray(k, dtype=np.float64)
    s = float(kf @ kf)
    if s == 0:
        raise InputError("collapse_same_key: k must be nonzero")
    return (1 - float(np.prod([1 - float(a) * s for a in alphas]))) / s, kf


def gh_unscaled_exact(alpha, k: Sequence) -> list:
    """``I - alpha k k^T`` exactly (k not normalized), for checking :func:`collapse_same_key`."""
    s = sum((to_exact(x) * to_exact(x) for x in k), Fraction(0))
    return gh_matrix_exact(to_exact(alpha) * s, [to_exact(x) for x in k])
