"""Exact and float64 arithmetic of the model's weights: matrices as lists of rows of exact values (int / Fraction /
:class:`lrnnkit.exact.Cyc`), and generalized Householder factors (paper 000, eq. 1 and Proposition 1)::

    G(beta, u) = I - beta u u^T / (u^T u),        A = G_n ... G_1   (later factor on the left, DeltaProduct's order)

``u`` is any nonzero multiple of the unit key ``v = u / ||u||``: the factor is exact in the field of ``u`` even
where ``v`` is not, as long as ``u^T u`` is rational.
"""
from __future__ import annotations

import json
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..exact import Cyc

__all__ = ["exact_identity", "exact_matmul", "exact_matvec", "gh_scale", "gh_matrix_exact", "gh_matrix_float",
           "exact_factor_product", "is_zero_exact", "short_value"]


def exact_identity(d: int) -> list:
    """The d x d identity as Fractions."""
    return [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]


def exact_matmul(A: list, B: list) -> list:
    """``A B`` exactly (lists of rows; zero entries skipped: the letter matrices are sparse)."""
    n, m, p = len(A), len(B), len(B[0]) if B else 0
    out = []
    for i in range(n):
        row = []
        Ai = A[i]
        for j in range(p):
            acc = Fraction(0)
            for k in range(m):
                a = Ai[k]
                if a != 0:
                    b = B[k][j]
                    if b != 0:
                        acc = acc + a * b
            row.append(acc)
        out.append(row)
    return out


def exact_matvec(A: list, x: Sequence) -> list:
    """``A x`` exactly."""
    out = []
    for row in A:
        acc = Fraction(0)
        for a, b in zip(row, x):
            if a != 0 and b != 0:
                acc = acc + a * b
        out.append(acc)
    return out


def gh_scale(beta, u: Sequence):
    """``beta / (u^T u)`` exactly: the coefficient of ``u u^T`` in a GH factor (u need not be a unit vector)."""
    nrm = Fraction(0)
    for x in u:
        nrm = nrm + x * x
    if isinstance(nrm, Cyc):
        raise InputError("GH factor direction with an irrational squared norm: give u with a rational u^T u")
    if nrm == 0:
        raise InputError("GH factor with a zero direction vector")
    return beta * Fraction(1) / nrm


def gh_matrix_exact(beta, u: Sequence) -> list:
    """``I - beta u u^T / (u^T u)`` exactly (u need not be a unit vector)."""
    d = len(u)
    s = gh_scale(beta, u)
    return [[Fraction(int(i == j)) - s * u[i] * u[j] for j in range(d)] for i in range(d)]


def gh_matrix_float(beta: float, v: np.ndarray) -> np.ndarray:
    """``I - beta v v^T`` in float64 (v a unit vector)."""
    v = np.asarray(v, dtype=np.float64)
    return np.eye(len(v)) - beta * np.outer(v, v)


def exact_factor_product(factors, d: int) -> list:
    """``G_n ... G_1`` exactly for factors with exact forms (``beta_exact``, ``u_exact``), each applied in O(d^2):
    ``G M = M - (beta / u^T u) u (u^T M)``."""
    M = exact_identity(d)
    for f in factors:
        u = list(f.u_exact)
        s = gh_scale(f.beta_exact, u)
        wrow = []
        for col in range(d):
            acc = Fraction(0)
            for r in range(d):
                if u[r] != 0 and M[r][col] != 0:
                    acc = acc + u[r] * M[r][col]
            wrow.append(acc)
        for r in range(d):
            if u[r] == 0:
                continue
            su = s * u[r]
            for col in range(d):
                if wrow[col] != 0:
                    M[r][col] = M[r][col] - su * wrow[col]
    return M


def is_zero_exact(x) -> bool:
    """Whether an exact value is 0 (a rational value is never stored as a :class:`~lrnnkit.exact.Cyc`, so a Cyc is
    never 0)."""
    return not isinstance(x, Cyc) and x == 0


def short_value(x) -> str:
    """A value for a message: short JSON, or its magnitude when it has many digits (1e400: "~1.000e+400")."""
    t = json.dumps(x)
    if len(t) <= 60:
        return t
    if isinstance(x, str):
        try:
            import mpmath
            f = Fraction(x)
            return "~" + mpmath.nstr(mpmath.mpf(f.numerator) / f.denominator, 4)
        except (ValueError, ZeroDivisionError):
            pass
    return t[:57] + "..."

