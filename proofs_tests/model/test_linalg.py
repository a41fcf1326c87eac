"""lrnnkit.model.linalg: exact arithmetic of generalized Householder factors (paper 000, eq. 1 and Proposition 1).

Oracle: the definition, G(beta, u) = I - beta u u^T / (u^T u) built entry by entry and multiplied with exact_matmul,
against the O(d^2)-per-factor product exact_factor_product; sympy's Matrix for the matrix product itself.
"""
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.errors import InputError
from lrnnkit.exact import cos2pi
from lrnnkit.model.linalg import (exact_factor_product, exact_identity, exact_matmul, exact_matvec, gh_matrix_exact,
                                  gh_matrix_float, gh_scale, short_value)

fractions = st.fractions(min_value=-4, max_value=4, max_denominator=6)


@st.composite
def factor_lists(draw, max_d=4, max_n=4):
    d = draw(st.integers(1, max_d))
    out = []
    for _ in range(draw(st.integers(0, max_n))):
        u = draw(st.lists(fractions, min_size=d, max_size=d).filter(lambda v: any(x != 0 for x in v)))
        beta = draw(st.fractions(min_value=0, max_value=2, max_denominator=5))
        out.append(SimpleNamespace(beta_exact=beta, u_exact=u))
    return d, out


@settings(max_examples=60, deadline=None)
@given(factor_lists())
def test_factor_product_is_the_product_of_the_factors(df):
    """G_n ... G_1 (later factor on the left), each factor in O(d^2), equals the product of the full matrices."""
    d, factors = df
    want = exact_identity(d)
    for f in factors:
        want = exact_matmul(gh_matrix_exact(f.beta_exact, f.u_exact), want)
    assert exact_factor_product(factors, d) == want


@settings(max_examples=60, deadline=None)
@given(st.lists(fractions, min_size=1, max_size=5).filter(lambda v: any(x != 0 for x in v)))
def test_beta_two_is_an_orthogonal_involution(u):
    """beta = 2: a reflection, symmetric and its own inverse; it maps u to -u and fixes u's orthogonal complement."""
    G = gh_matrix_exact(Fraction(2), u)
    d = len(u)
    assert exact_matmul(G, G) == exact_identity(d)
    assert all(G[i][j] == G[j][i] for i in range(d) for j in range(d))
    assert exact_matvec(G, u) == [-x for x in u]


@settings(max_examples=40, deadline=None)
@given(st.lists(fractions, min_size=2, max_size=4), st.lists(fractions, min_size=2, max_size=4))
def test_exact_matmul_matches_sympy(a, b):
    import sympy
    n = min(len(a), len(b))
    A = [a[:n]] * n
    B = [[x * (i + 1) for x in b[:n]] for i in range(n)]
    assert exact_matmul(A, B) == (sympy.Matrix(A) * sympy.Matrix(B)).tolist()


def test_float_factor_is_the_rounding_of_the_exact_one():
    """gh_matrix_float(beta, v) with v = u / ||u|| agrees with the exact factor to float64 rounding (the products of a
    few float64 operations on entries of size <= 1: 1e-14 is 50 ulps)."""
    u = [Fraction(1), Fraction(-2), Fraction(2)]
    beta = Fraction(3, 2)
    v = np.array([float(x) for x in u]) / 3.0
    exact = np.array([[float(x) for x in r] for r in gh_matrix_exact(beta, u)])
    assert np.allclose(gh_matrix_float(float(beta), v), exact, rtol=0, atol=1e-14)


def test_gh_scale_refuses_a_zero_or_irrational_direction():
    with pytest.raises(InputError, match="zero direction"):
        gh_scale(Fraction(1), [Fraction(0), Fraction(0)])
    with pytest.raises(InputError, match="irrational squared norm"):
        gh_scale(Fraction(1), [cos2pi(1, 5), Fraction(0)])        # cos(2 pi / 5)^2 is irrational
    assert gh_scale(Fraction(2), [Fraction(3), Fraction(4)]) == Fraction(2, 25)


def test_short_value_gives_the_magnitude_of_a_long_number():
    assert short_value("3/4") == '"3/4"'
    assert short_value("1" + "0" * 400).startswith("~1.0e+400")
    assert short_value(list(range(100))).endswith("...") and len(short_value(list(range(100)))) == 60
