"""Exact linear algebra and counterexample-search helpers shared by the statement checks (paper_000 .. paper_004).

Two matrix representations are used, on purpose:

* **tuples of tuples** (``eye``, ``mm``, ``mv``, ``tr``, ``madd``, ``mscale``, ``prod``, ``gh``, ``householder``):
  entries int, :class:`fractions.Fraction` or :class:`lrnnkit.exact.Cyc`; hashable, so the breadth-first searches
  of 000 / 001 can keep sets of exact states. Why own helpers instead of sympy matrices: the searches multiply
  thousands of small exact matrices; tuples of Fractions are ~50x faster than sympy's Matrix.
* **lists of lists** of Fractions (``exact_identity`` / ``exact_matmul`` from :mod:`lrnnkit.model.linalg`,
  ``transpose``, ``msub``, ``madd_list``, ``mscale_list``, ``solve``, ``det``), used by 002 / 003 / 004.

The decision procedures (``is_pd``, ``is_psd``, ``rank``, ``norm2_lt1``) accept either representation.

The checks stay independent of :mod:`lrnnkit.constructions` (they are an oracle for it); only the exact matrix
primitives of :mod:`lrnnkit.model.linalg` are reused.
"""
from __future__ import annotations

import contextvars
from fractions import Fraction as F
from typing import Callable, Sequence

from ..exact import Cyc
from ..model.linalg import exact_identity, exact_matmul

__all__ = ["eye", "mm", "mv", "tr", "dot", "madd", "mscale", "prod", "gh", "householder", "basis_vector",
           "unit_from", "gh_product", "exact_identity", "exact_matmul", "transpose", "msub", "madd_list",
           "mscale_list", "solve", "det", "is_pd", "is_psd", "rank", "norm2_lt1", "norm2_le1", "fstr", "mstr",
           "search", "hyp_settings", "find_or_none", "st_fraction", "st_unit", "st_gh_product"]


# ---------------------------------------------------------------------------------------------------------------
# tuple matrices (hashable; entries int, Fraction or lrnnkit.exact.Cyc)


def eye(n: int) -> tuple:
    return tuple(tuple(F(int(i == j)) for j in range(n)) for i in range(n))


def mm(A, B) -> tuple:
    Bt = list(zip(*B))
    return tuple(tuple(sum((a * b for a, b in zip(row, col)), F(0)) for col in Bt) for row in A)


def mv(A, v) -> tuple:
    return tuple(sum((a * b for a, b in zip(row, v)), F(0)) for row in A)


def tr(A) -> tuple:
    return tuple(zip(*A))


def dot(u, v):
    return sum((a * b for a, b in zip(u, v)), F(0))


def madd(A, B, s=1) -> tuple:
    """``A + s B``."""
    return tuple(tuple(a + s * b for a, b in zip(r, q)) for r, q in zip(A, B))


def mscale(A, s) -> tuple:
    return tuple(tuple(s * a for a in r) for r in A)


def prod(mats: Sequence, n: int) -> tuple:
    """``mats[0] @ mats[1] @ ...`` (the paper's C_1 C_2 ... C_k); the identity for an empty list."""
    out = eye(n)
    for M in mats:
        out = mm(out, M)
    return out


def gh(beta, w) -> tuple:
    """The GH matrix ``I - beta v v^T`` with ``v = w / ||w||`` written without square roots:
    ``I - beta w w^T / (w^T w)`` (w rational, so the matrix is rational even when ``||w||`` is irrational)."""
    n = len(w)
    ww = dot(w, w)
    return tuple(tuple(F(int(i == j)) - F(beta) * w[i] * w[j] / ww for j in range(n)) for i in range(n))


def householder(beta, v) -> tuple:
    """``I - beta v v^T`` with no normalization (v a unit vector, possibly cyclotomic, or any direction when the
    formula is meant literally, as in 001's Lemma 1)."""
    n = len(v)
    return tuple(tuple(F(int(i == j)) - beta * v[i] * v[j] for j in range(n)) for i in range(n))


def basis_vector(i: int, n: int) -> tuple:
    """``e_i`` of Q^n (0-based)."""
    return tuple(F(int(r == i)) for r in range(n))


def unit_from(t: Sequence) -> tuple:
    """A rational point of the unit sphere S^{n-1} from ``t`` in Q^{n-1} (inverse stereographic projection), so
    every GH matrix built from it has ``||v|| = 1`` exactly."""
    t = [F(x) for x in t]
    s = sum(x * x for x in t)
    return tuple([2 * x / (s + 1) for x in t] + [(s - 1) / (s + 1)])


def gh_product(factors, n: int) -> tuple:
    """``C_1 ... C_k`` for factors ``[(beta_1, v_1), ..., (beta_k, v_k)]`` (000, eq. 5)."""
    return prod([gh(b, v) for b, v in factors], n)


# ---------------------------------------------------------------------------------------------------------------
# list matrices of Fractions (002, 003, 004); exact_identity / exact_matmul come from lrnnkit.model.linalg


def block_diag(blocks: list) -> list:
    """The block-diagonal matrix of square blocks (list of lists; entries as given, zeros Fraction(0))."""
    n = sum(len(b) for b in blocks)
    M = [[F(0)] * n for _ in range(n)]
    o = 0
    for b in blocks:
        for i, r in enumerate(b):
            for j, v in enumerate(r):
                M[o + i][o + j] = v
        o += len(b)
    return M


def transpose(A: list) -> list:
    return [list(r) for r in zip(*A)] if A else []


def msub(A: list, B: list) -> list:
    return [[a - b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def madd_list(A: list, B: list) -> list:
    return [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def mscale_list(c, A: list) -> list:
    return [[c * a for a in r] for r in A]


def solve(A: list, B: list) -> list | None:
    """Exact ``A^{-1} B`` by Gauss-Jordan with pivoting; None if A is singular."""
    n = len(A)
    M = [list(map(F, ra)) + list(map(F, rb)) for ra, rb in zip(A, B)]
    w = len(M[0])
    for c in range(n):
        piv = next((r for r in range(c, n) if M[r][c] != 0), None)
        if piv is None:
            return None
        M[c], M[piv] = M[piv], M[c]
        p = M[c][c]
        M[c] = [x / p for x in M[c]]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [row[n:w] for row in M]


def det(A: list):
    n = len(A)
    M = [list(map(F, r)) for r in A]
    d = F(1)
    for c in range(n):
        piv = next((r for r in range(c, n) if M[r][c] != 0), None)
        if piv is None:
            return F(0)
        if piv != c:
            M[c], M[piv] = M[piv], M[c]
            d = -d
        d *= M[c][c]
        for r in range(c + 1, n):
            f = M[r][c] / M[c][c]
            if f:
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return d


# ---------------------------------------------------------------------------------------------------------------
# decision procedures (rational entries; tuples or lists)


def _ldl_pivots_ok(S, strict: bool) -> bool:
    """Symmetric Gaussian elimination (LDL^T without pivoting) of a symmetric rational matrix: positive definite
    iff every pivot is > 0 (``strict``); positive semidefinite iff every pivot is >= 0 and a zero pivot has a zero
    row (checking all principal minors would be exponential)."""
    n = len(S)
    A = [list(map(F, r)) for r in S]
    for k in range(n):
        p = A[k][k]
        if p < 0 or (strict and p == 0):
            return False
        if p == 0:
            if any(A[k][j] != 0 for j in range(k, n)):
                return False
            continue
        for i in range(k + 1, n):
            f = A[i][k] / p
            if f:
                for j in range(k, n):
                    A[i][j] -= f * A[k][j]
    return True


def is_pd(S) -> bool:
    """Exact positive definiteness of a symmetric rational matrix."""
    return _ldl_pivots_ok(S, strict=True)


def is_psd(S) -> bool:
    """Exact positive semidefiniteness of a symmetric rational matrix."""
    return _ldl_pivots_ok(S, strict=False)


def rank(A) -> int:
    """Exact rank of a rational matrix (Gauss-Jordan)."""
    M = [list(map(F, r)) for r in A]
    rows, cols = len(M), len(M[0]) if M else 0
    r = 0
    for c in range(cols):
        piv = next((i for i in range(r, rows) if M[i][c] != 0), None)
        if piv is None:
            continue
        M[r], M[piv] = M[piv], M[r]
        for i in range(rows):
            if i != r and M[i][c] != 0:
                f = M[i][c] / M[r][c]
                M[i] = [x - f * y for x, y in zip(M[i], M[r])]
        r += 1
    return r


def norm2_lt1(P: list) -> bool:
    """``||P||_2 < 1`` exactly: ``I - P^T P`` positive definite."""
    return is_pd(msub(exact_identity(len(P[0])), exact_matmul(transpose(P), P)))


def norm2_le1(P: list) -> bool:
    return is_psd(msub(exact_identity(len(P[0])), exact_matmul(transpose(P), P)))


# ---------------------------------------------------------------------------------------------------------------
# JSON-friendly strings


def fstr(x) -> str:
    return str(F(x))


def mstr(A: list) -> list:
    return [[fstr(x) for x in r] for r in A]


def _fx(x) -> str:
    return str(F(x)) if not isinstance(x, Cyc) else repr(x)


def _mat_json(M) -> list:
    return [[_fx(x) for x in r] for r in M]


def _fac_json(factors) -> list:
    return [{"beta": _fx(b), "v": [_fx(x) for x in v]} for b, v in factors]


# ---------------------------------------------------------------------------------------------------------------
# hypothesis: a check searches for a counterexample and returns it (shrunk or not), or None


#: set while a check runs on its perturbation (registry.run_check): a counterexample is then only detected, never
#: shrunk (the perturbation test asks whether the check fails, not for a minimal instance)
DETECT_ONLY = contextvars.ContextVar("DETECT_ONLY", default=False)


def search(strategy, is_counterexample: Callable, max_examples: int):
    """``hypothesis.find`` (derandomized, no example database, shrinking on unless :data:`DETECT_ONLY`): the
    (shrunk) counterexample or None."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample
    phases = (Phase.explicit, Phase.generate) + (() if DETECT_ONLY.get() else (Phase.shrink,))
    try:
        return find(strategy, is_counterexample,
                    settings=settings(max_examples=max_examples, derandomize=True, database=None, phases=phases,
                                      suppress_health_check=list(HealthCheck), deadline=None))
    except NoSuchExample:
        return None


def hyp_settings(profile: str, quick: int, deep: int, shrink: bool = False):
    """Deterministic hypothesis settings for checks: derandomized (same counterexample every run), no example
    database, no deadline (exact arithmetic has variable cost). Shrinking is off by default: on exact-arithmetic
    predicates it can take minutes, and every check that records a counterexample verifies its recorded, minimal-by-
    construction counterexample exactly instead of relying on the shrinker."""
    from hypothesis import HealthCheck, Phase, settings
    phases = (Phase.explicit, Phase.generate) + ((Phase.shrink,) if shrink and not DETECT_ONLY.get() else ())
    return settings(max_examples=quick if profile == "quick" else deep, database=None, derandomize=True,
                    deadline=None, suppress_health_check=list(HealthCheck), phases=phases)


def find_or_none(strategy, predicate, profile: str, quick: int, deep: int, shrink: bool = False):
    """``hypothesis.find`` returning a counterexample (shrunk if ``shrink``), or None when the search found none."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample
    try:
        return find(strategy, predicate, settings=hyp_settings(profile, quick, deep, shrink))
    except NoSuchExample:
        return None


def _st():
    import hypothesis.strategies as st
    return st


def st_fraction(lo, hi, max_den=12, lo_open=False, hi_open=False):
    st = _st()
    lo, hi = F(lo), F(hi)

    def ok(x):
        return (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
    return st.fractions(min_value=lo, max_value=hi, max_denominator=max_den).filter(ok)


def st_unit(n: int):
    """Rational unit vectors of R^n (hypothesis strategy)."""
    st = _st()
    return st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=6), min_size=n - 1,
                    max_size=n - 1).map(unit_from)


def st_gh_product(n: int, kmax: int, beta_lo, beta_hi, hi_open=False):
    """Lists of (beta, v) factors with ``1 - beta`` in the requested eigenvalue range."""
    st = _st()
    return st.lists(st.tuples(st_fraction(beta_lo, beta_hi, hi_open=hi_open), st_unit(n)), min_size=1,
                    max_size=kmax)


def search_norm_above_1(make: Callable, dims: Sequence, beta_hi, max_examples: int):
    """The first list of <= 4 GH factors (beta in [0, beta_hi], rational unit vectors) in R^n, n in ``dims``, for
    which ``make(factors, n)`` has spectral norm > 1 (exact: I - M^T M not PSD), as (n, factors); None if none."""
    for n in dims:
        def above(facs, n=n):
            M = make(facs, n)
            return not is_psd(madd(eye(n), mm(tr(M), M), -1))
        found = search(st_gh_product(n, 4, 0, beta_hi), above, max_examples)
        if found is not None:
            return n, found
    return None
