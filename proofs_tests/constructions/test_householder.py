"""000, Proposition 1.2 as a library (lrnnkit.constructions.householder) and 001, Lemma 1.

Oracles: exact products (Fractions) compared entry by entry; sympy for ranks (the least number of reflections of
an orthogonal Q is rank(Q - I)); numpy SVD norms for the float path.
"""
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.constructions import householder as HH
from lrnnkit.errors import InputError

small = st.fractions(min_value=-3, max_value=3, max_denominator=5)


def cayley_orthogonal(K):
    """(I - K)(I + K)^{-1} for skew-symmetric rational K: a rational orthogonal matrix (sympy, exact)."""
    K = sympy.Matrix(K)
    n = K.shape[0]
    Q = (sympy.eye(n) - K) * (sympy.eye(n) + K).inv()
    return [[Fraction(int(sympy.fraction(x)[0]), int(sympy.fraction(x)[1])) for x in Q.row(i)] for i in range(n)]


@st.composite
def rational_orthogonal(draw):
    n = draw(st.integers(1, 5))
    K = [[sympy.Integer(0)] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            v = draw(small)
            K[i][j] = sympy.Rational(v.numerator, v.denominator)
            K[j][i] = -K[i][j]
    Q = cayley_orthogonal(K)
    # sometimes flip a sign (Cayley transforms have no eigenvalue -1) so that det = -1 occurs too
    if draw(st.booleans()):
        Q[0] = [-x for x in Q[0]]
    return Q


@given(rational_orthogonal())
def test_orthogonal_exact(Q):
    n = len(Q)
    fac = HH.orthogonal_factors(Q)
    assert HH.product_exact(fac, n) == Q
    assert all(f.beta_exact == 2 for f in fac)
    rank = sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) - int(i == j) for j, x in enumerate(r)]
                         for i, r in enumerate(Q)]).rank()
    assert rank <= len(fac) <= n          # Cartan-Dieudonne: at least rank(Q - I), at most n


@given(st.integers(1, 6), st.integers(0, 10_000))
def test_orthogonal_float(n, seed):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    fac = HH.orthogonal_factors(Q)
    assert len(fac) <= n
    # Householder reduction is backward stable: error ~ n eps; 1e-12 leaves a wide margin
    assert np.abs(HH.product_float(fac, n) - Q).max() < 1e-12


@given(st.permutations(range(6)))
def test_permutation_exact(p):
    n = len(p)
    fac = HH.permutation_factors(list(p))
    P = [[Fraction(int(p[j] == i)) for j in range(n)] for i in range(n)]
    assert HH.product_exact(fac, n) == P
    assert len(fac) <= n - 1


@given(st.integers(1, 6), st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_contraction_float(n, seed, scale):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n, n))
    M = scale * M / np.linalg.norm(M, 2)
    fac = HH.contraction_factors(M)
    assert len(fac) <= 3 * n
    assert all(-1e-15 <= f.beta <= 2 + 1e-15 for f in fac)           # eigenvalue 1 - beta in [-1, 1]
    # SVD + Householder in float64: backward error a few n eps ||M||; 1e-10 is the stated tolerance
    assert np.abs(HH.product_float(fac, n) - M).max() < 1e-10


def test_contraction_rejects_large_norm():
    with pytest.raises(InputError, match="> 1"):
        HH.contraction_factors(np.diag([1.5, 0.2]))


def test_orthogonal_rejects_non_orthogonal():
    with pytest.raises(InputError, match="not orthogonal"):
        HH.orthogonal_factors([[1, 1], [0, 1]])


@given(st.lists(small, min_size=1, max_size=4), st.lists(small, min_size=1, max_size=4))
def test_lemma1_collapse_exact(alphas, k):
    if all(x == 0 for x in k):
        k = [Fraction(1)] + k[1:]
    a_star, kk = HH.collapse_same_key(alphas, k)
    n = len(k)
    P = HH.product_exact([], n)
    from lrnnkit.model import exact_matmul
    for a in alphas:
        P = exact_matmul(HH.gh_unscaled_exact(a, k), P)
    assert P == HH.gh_unscaled_exact(a_star, k)


def test_diagonal_factors_exact():
    d = [Fraction(1, 2), Fraction(-1), Fraction(1), Fraction(0)]
    fac = HH.diagonal_factors(d)
    assert HH.product_exact(fac, 4) == [[d[i] if i == j else 0 for j in range(4)] for i in range(4)]
    assert len(fac) == 3
