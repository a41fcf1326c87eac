"""Exact cyclotomic arithmetic (lrnnkit.exact) against mpmath at 50 digits and sympy's algebraic identities."""
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.exact import Cyc, cos2pi, exact_from_json, exact_to_json, sign, sin2pi, to_float, to_sympy, zeta
from lrnnkit.errors import InputError

orders = st.sampled_from([3, 4, 5, 7, 8, 12, 20])
fracs = st.fractions(min_value=-5, max_value=5, max_denominator=7)


@st.composite
def cyc(draw):
    N = draw(orders)
    phi = int(sympy.totient(N))
    return Cyc.make(N, draw(st.lists(fracs, min_size=phi, max_size=phi)))


def num(x):
    return x.to_mpc(50) if isinstance(x, Cyc) else mpmath.mpf(x.numerator) / x.denominator


# Tolerance: all values have |x| < 10^4 here and are evaluated at 50 digits, so 1e-35 separates
# a real discrepancy from evaluation error by many orders of magnitude.
TOL = mpmath.mpf(10) ** -35


@given(cyc(), cyc())
def test_field_operations_match_numerics(a, b):
    with mpmath.workdps(50):
        assert abs(num(a + b) - (num(a) + num(b))) < TOL
        assert abs(num(a * b) - num(a) * num(b)) < TOL
        assert abs(num(a - b) - (num(a) - num(b))) < TOL


@given(cyc())
def test_zero_is_exact_and_canonical(a):
    z = a - a
    assert isinstance(z, Fraction) and z == 0
    assert hash(a * 1) == hash(a)


@pytest.mark.parametrize("m", [3, 5, 7, 8, 9, 12])
def test_roots_of_unity_identities(m):
    s = Fraction(0)
    for k in range(m):
        s = s + zeta(m, k)
    assert s == 0                                             # sum of all m-th roots of unity
    for k in range(m):
        c, s_ = cos2pi(k, m), sin2pi(k, m)
        assert c * c + s_ * s_ == 1                          # exact Pythagoras across Q(zeta_m), Q(zeta_4m)
        assert abs(to_float(c) - float(mpmath.cos(2 * mpmath.pi * k / m))) < 1e-15


def test_sympy_agrees_on_closed_forms():
    assert sympy.simplify(to_sympy(cos2pi(1, 5)) - (sympy.sqrt(5) - 1) / 4) == 0
    assert sympy.simplify(to_sympy(cos2pi(1, 8)) - sympy.sqrt(2) / 2) == 0


@given(cyc())
def test_sign_matches_high_precision(a):
    x = (a + _conj(a)) * Fraction(1, 2)  # the real part of a: sign() needs a real value
    v = num(x) if isinstance(x, Cyc) else num(Fraction(x))
    v = mpmath.re(v)
    if abs(v) > mpmath.mpf(10) ** -20:
        assert sign(x) == (1 if v > 0 else -1)
    elif not isinstance(x, Cyc):
        assert sign(x) == 0


def _conj(a):
    if not isinstance(a, Cyc):
        return a
    out = Fraction(0)
    for i, c in enumerate(a.c):
        if c:
            out = out + zeta(a.N, -i) * c
    return out


@given(cyc())
def test_json_round_trip(a):
    assert exact_from_json(exact_to_json(a)) == a


@pytest.mark.parametrize("bad", ["1/0", "abc", {"cyc": 5, "c": ["1"]}, {"cyc": -1, "c": []}, [1], "__import__('os')"])
def test_bad_exact_values(bad):
    with pytest.raises(InputError):
        exact_from_json(bad)
