"""Exact casts keep the sign of negative irrational / cyclotomic values; ``precision
collapse`` honours ``--steps`` and validates its flags."""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.exact import cos2pi, sin2pi
from lrnnkit.precision.cast import _mpf_to_fraction, cast_exact
from lrnnkit.precision.formats import format_names, get_format

MODES = {"nearest-even": "n", "toward-zero": "d", "toward-positive": "c", "toward-negative": "f"}
CLI = [sys.executable, "-m", "lrnnkit"]


@settings(max_examples=25, deadline=None)
@given(m=st.integers(3, 48), k=st.integers(1, 47), use_sin=st.booleans(), neg=st.booleans())
def test_exact_cast_of_cyclotomic_values_against_mpmath_every_format_and_mode(m, k, use_sin, neg):
    """cos(2 pi k / m), sin(2 pi k / m) and their negatives, in every format and every deterministic rounding mode,
    against mpmath: a 300-bit evaluation rounded at the format's precision with the same direction (mpf_pos). Both
    signs are drawn: the old cast read mpmath's unsigned mantissa and returned |x| rounded. Values in the normal
    range only (mpmath has no exponent range; |x| <= 1 never overflows); rational values (cos 2pi/4 = 0, cos 2pi/3 =
    -1/2) are exact Fractions and go through the rational path, checked against the float64 identity."""
    k = k % m or 1
    val = sin2pi(k, m) if use_sin else cos2pi(k, m)
    if neg:
        val = -val
    with mpmath.workprec(300):
        ref = (mpmath.sin if use_sin else mpmath.cos)(2 * mpmath.pi * k / m)
        if neg:
            ref = -ref
    for name in format_names():
        f = get_format(name)
        if not f.has_zero and ref <= 0:   # e8m0fnu: positive powers of two only (<= 0 gives NaN, tested elsewhere)
            continue
        for mode, r in MODES.items():
            got = cast_exact(val, f, mode)
            if isinstance(val, Fraction):
                if abs(val) >= Fraction(f.min_normal):
                    assert got == float(val)     # -1/2, 1/2, -1, 1, 0 are in every format
                continue
            if abs(ref) < f.min_normal:
                continue
            want = float(mpmath.mpf(mpmath.libmp.mpf_pos(ref._mpf_, f.precision, r)))
            assert got == want, (name, mode, k, m, use_sin, neg, got, want)
            assert (got < 0) == (ref < 0)


@settings(max_examples=100, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_mpf_to_fraction_keeps_the_sign(x):
    assert _mpf_to_fraction(mpmath.mpf(x)) == Fraction(x)


CASES = [("cos(2*pi*3/7)", "-0.90096886790241914"), ("-cos(2*pi/5)", "-0.309016994"),
         ("sin(2*pi*5/8)", "-0.70710678118654757"), ("-sin(2*pi/12)", "-0.5")]


def test_cli_cast_prints_negative_values(capsys):
    from lrnnkit.cli import main
    rc = main(["precision", "cast", "--format", "fp64", "--"] + [e for e, _ in CASES])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.strip().splitlines()
    assert len(lines) == len(CASES)
    for line, (_e, want) in zip(lines, CASES):
        assert line.split("->")[1].strip().startswith(want), line


@pytest.mark.slow
def test_cli_cast_prints_negative_values_subprocess():
    r = subprocess.run(CLI + ["precision", "cast", "--format", "fp64", "--"] + [e for e, _ in CASES],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for line, (_e, want) in zip(r.stdout.strip().splitlines(), CASES):
        assert line.split("->")[1].strip().startswith(want), line
