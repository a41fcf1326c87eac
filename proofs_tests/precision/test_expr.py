"""Safe symbolic expressions (lrnnkit.precision.expr): the whitelist builds the exact sympy value (decimals read
exactly from their text), everything else is refused in one line before anything runs, sizes are bounded, and the
bracket of an irrational value holds it (checked against mpmath at 60 digits, an independent evaluation)."""
from fractions import Fraction

import mpmath
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.precision.expr import FUNCTIONS, exact_bracket, parse_expression


@pytest.mark.parametrize("text,value", [("1/sqrt(2)", 1 / sympy.sqrt(2)), ("2**-3", sympy.Rational(1, 8)),
                                        ("pi/4", sympy.pi / 4), ("exp(-1)", sympy.exp(-1)),
                                        ("0.1", sympy.Rational(1, 10)), ("-(3 - 5) * e", 2 * sympy.E),
                                        ("abs(-7)/2", sympy.Rational(7, 2)), ("cbrt(27)", sympy.Integer(3))])
def test_the_whitelist_builds_the_exact_value(text, value):
    assert sympy.simplify(parse_expression(text) - value) == 0


@pytest.mark.parametrize("text", ["__import__('os')", "x", "(1).real", "[1][0]", "1 ^ 2", "1 < 2", "sqrt(2, 3)",
                                  "sqrt(x=2)", "lambda: 1", "'a'", "True", "1 +"])
def test_everything_else_is_refused_in_one_line(text):
    with pytest.raises(InputError) as e:
        parse_expression(text)
    assert "\n" not in str(e.value)


def test_sizes_are_bounded():
    with pytest.raises(SizeLimitError):
        parse_expression("+".join(["1"] * 150))
    with pytest.raises(InputError):
        parse_expression("2**(10**9)")


@given(st.fractions(min_value=-10 ** 6, max_value=10 ** 6, max_denominator=10 ** 6))
def test_a_rational_bracket_is_the_value(f):
    assert exact_bracket(sympy.Rational(f.numerator, f.denominator), 20) == (f, f)


@pytest.mark.parametrize("text,ref", [("1/sqrt(2)", lambda m: 1 / m.sqrt(2)), ("pi/4", lambda m: m.pi / 4),
                                      ("exp(-1)", lambda m: m.exp(-1)), ("log(3)", lambda m: m.log(3)),
                                      ("sin(1) + cos(2)", lambda m: m.sin(1) + m.cos(2)),
                                      ("atan(5)", lambda m: m.atan(5))])
def test_an_irrational_bracket_holds_the_value(text, ref):
    lo, hi = exact_bracket(parse_expression(text), 30)
    with mpmath.workdps(60):
        ref = ref(mpmath)
        assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
    assert 0 < hi - lo <= abs(lo + hi) * Fraction(1, 10 ** 26)


def test_every_listed_function_is_accepted():
    for f in FUNCTIONS:
        assert parse_expression(f"{f}(1/2)").is_real
