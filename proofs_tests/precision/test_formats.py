"""Formats that mean what their names mean, and the rounding modes beyond the IEEE four.

* Every format that ml_dtypes also has is checked bit for bit against ml_dtypes: every code decodes alike, every
  representable value (and every midpoint) casts alike, and random float64 inputs (hypothesis) cast alike once the
  one difference is accounted for: ml_dtypes converts float64 to its small formats through float32 (two roundings),
  so ``ml_dtypes(x) == ours(fp32(x))``, and ``ml_dtypes(x) == ours(x)`` for every x that float32 holds.
* ties-away and round-to-odd against pychop (its modes 8 and 9, where pychop 0.6.2 is right) and against their
  definitions written with fractions; seeded stochastic rounding through the CLI.
* ``lrnnkit precision cast``: symbolic expressions, negative values anywhere.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.precision.commands import cli_cast
from lrnnkit.precision.cast import cast, cast_exact, cast_torch, scalar_caster
from lrnnkit.precision.formats import ML_DTYPES_NAMES, FloatFormat, format_names, get_format
from lrnnkit.precision.policy import Rounder, scalar_adder
from lrnnkit.precision.rounding import ROUNDINGS
from proofs_tests._paths import REPO

SHARED = sorted(ML_DTYPES_NAMES)            # float8_e4m3fn, ..., float4_e2m1fn
BIT_CHECKED = SHARED + ["bfloat16"]
DETERMINISTIC = [r for r in ROUNDINGS if r != "stochastic"]


def ml_codes(x: np.ndarray, name: str) -> np.ndarray:
    """ml_dtypes' codes of float64 x (its own conversion, which goes through float32)."""
    dt = getattr(ml_dtypes, name)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.asarray(x, dtype=np.float64).astype(dt)
    return y.view(np.uint8 if np.dtype(dt).itemsize == 1 else np.uint16).astype(np.int64)


def ours_codes(x: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return fmt.encode(cast(np.asarray(x, dtype=np.float64), fmt))


def _e8m0_gap(fmt: FloatFormat, x32: np.ndarray) -> np.ndarray:
    """Inputs where ml_dtypes' float8_e8m0fnu is not the nearest rounding: it sends every float32 strictly between
    2^-127 and 2^-126 (float32 subnormals) to 2^-126, also those below the midpoint 1.5 * 2^-127, which are nearer to
    2^-127 (pinned by test_ml_dtypes_e8m0fnu_rounds_float32_subnormals_up)."""
    if fmt.special != "fnu":
        return np.zeros(x32.shape, dtype=bool)
    return (x32 > 2.0 ** -127) & (x32 < 1.5 * 2.0 ** -127)


def _comparable(fmt: FloatFormat, x32: np.ndarray) -> np.ndarray:
    """NaN inputs of formats without NaN have no encoding (ml_dtypes gives -0 / +0, lrnnkit keeps NaN)."""
    ok = ~_e8m0_gap(fmt, x32)
    if not fmt.has_nan:
        ok &= ~np.isnan(x32)
    return ok


# ---------------------------------------------------------------- names
def test_every_ml_dtypes_name_resolves_to_its_definition():
    """Each ml_dtypes name (and its fpN- / bare / underscore spellings; float8_e4m3's is fp8-e4m3-ieee) gives a format
    with ml_dtypes' max, smallest normal and smallest subnormal, and ``ml_dtypes_name`` names it back."""
    for name in SHARED:
        fi = ml_dtypes.finfo(getattr(ml_dtypes, name))
        core = name.split("_", 1)[1]
        bits = re.match(r"float(\d+)", name).group(1)
        fp = [f"fp{bits}-{core}", f"fp{bits}_{core}"] if core != "e4m3" else ["fp8-e4m3-ieee"]  # fp8-e4m3: refused
        for spelling in [name, core, name.upper()] + fp:
            f = get_format(spelling)
            assert f.ml_dtypes_name == name, spelling
            assert (f.max_finite, f.min_normal, f.min_subnormal) == \
                (float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal)), spelling
            assert f.bits == fi.bits
            assert get_format(f.label) == f          # the label names the same format


def test_issue_examples_and_ocp_names():
    assert list(cast(np.array([6.0, 5.0, 7.0]), "e2m1fn")) == [6.0, 4.0, 6.0]      # max 6, no NaN: saturates
    assert get_format("e2m3fn").max_finite == 7.5 and get_format("e3m2fn").max_finite == 28.0
    for ocp, ml in (("fp8-e5m2", "float8_e5m2"), ("fp6-e2m3", "float6_e2m3fn"), ("fp6-e3m2", "float6_e3m2fn"),
                    ("fp4-e2m1", "float4_e2m1fn"), ("fp4", "float4_e2m1fn"), ("mxfp4", "float4_e2m1fn"),
                    ("mxfp8-e4m3", "float8_e4m3fn"), ("fp8-e8m0", "float8_e8m0fnu"), ("fp8-e4m3-ieee", "float8_e4m3"),
                    ("float8_e4m3", "float8_e4m3"), ("fp8_e4m3fn", "float8_e4m3fn")):
        assert get_format(ocp).ml_dtypes_name == ml, ocp
    assert get_format("fp8-e4m3-ieee").max_finite == 240.0 and get_format("fp8-e4m3fn").max_finite == 448.0


@pytest.mark.parametrize("name", ["fp8-e4m3", "FP8_E4M3", "fp8-e4m3-sat"])
def test_ambiguous_fp8_e4m3_is_refused_with_both_meanings(name):
    with pytest.raises(InputError) as ei:
        get_format(name)
    msg = str(ei.value)
    assert "\n" not in msg and "fp8-e4m3fn" in msg and "fp8-e4m3-ieee" in msg and "448" in msg and "240" in msg


def test_bad_names():
    for bad, why in (("float6_e2m3", "ml_dtypes has no float6_e2m3"), ("fp8-e5m3", "9 bits, not 8"),
                     ("e4m3fn-nonan", "at most one"), ("e3m2fnu", "no mantissa bits")):
        with pytest.raises(InputError, match=why):
            get_format(bad)
    assert format_names()[:5] == ["fp64", "fp32", "tf32", "bf16", "fp16"]
    assert all(get_format(n).label == n for n in format_names())


# ---------------------------------------------------------------- bit for bit against ml_dtypes
@pytest.mark.parametrize("name", BIT_CHECKED)
def test_every_code_decodes_and_encodes_like_ml_dtypes(name):
    fmt = get_format(name)
    codes = np.arange(1 << fmt.bits, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        lib = codes.astype(np.uint8 if fmt.bits <= 8 else np.uint16).view(getattr(ml_dtypes, name)).astype(np.float64)
    ours = fmt.decode_bits(codes)
    assert np.array_equal(ours.view(np.uint64), lib.view(np.uint64)) or \
        np.array_equal(np.isnan(ours), np.isnan(lib)) and \
        np.array_equal(ours[~np.isnan(ours)].view(np.uint64), lib[~np.isnan(lib)].view(np.uint64))
    num = ~np.isnan(ours)
    assert np.array_equal(fmt.encode(ours[num]), codes[num])       # encode inverts decode on every value
    assert np.isnan(ours).sum() == np.isnan(lib).sum()


@pytest.mark.parametrize("name", BIT_CHECKED)
def test_every_value_midpoint_and_special_casts_like_ml_dtypes(name):
    """Every representable value (both zeros), every midpoint between neighbours (the ties), the midpoints' float32
    neighbours, the overflow boundary and beyond, inf, NaN: identical codes (all of these are float32 values)."""
    fmt = get_format(name)
    v = fmt.all_values()
    mids = (v[:-1] + v[1:]) / 2
    top = fmt.max_finite
    ulp_top = 2.0 ** (fmt.emax - fmt.man_bits)
    extra = np.array([top + ulp_top / 2, top + ulp_top / 4, top + ulp_top, 2 * top, 1e30, np.inf, np.nan,
                      fmt.min_subnormal / 2, fmt.min_subnormal / 4, 1e-40, 0.0])
    with np.errstate(over="ignore"):
        x = np.concatenate([v, mids, extra, -extra]).astype(np.float32)
    x = np.concatenate([x, np.nextafter(x, np.float32(np.inf)), np.nextafter(x, np.float32(-np.inf))])
    x = x[_comparable(fmt, x)].astype(np.float64)
    ours, lib = ours_codes(x, fmt), ml_codes(x, name)
    bad = ours != lib
    assert not bad.any(), (x[bad][:5], ours[bad][:5], lib[bad][:5])


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(BIT_CHECKED), x=st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_random_float64_inputs_like_ml_dtypes(name, x):
    """Any float64 (hypothesis): ml_dtypes' codes are ours after rounding to float32 first (ml_dtypes' path), and
    ours exactly when x is a float32; ours is always the exact rounding of x."""
    fmt = get_format(name)
    with np.errstate(over="ignore"):
        x32 = np.array([x], dtype=np.float64).astype(np.float32).astype(np.float64)
    if not _comparable(fmt, x32).all():
        return
    assert ours_codes(cast(x32, "fp32"), fmt)[0] == ml_codes(np.array([x]), name)[0]
    if x32[0] == x or (math.isnan(x) and fmt.has_nan):
        assert ours_codes(np.array([x]), fmt)[0] == ml_codes(np.array([x]), name)[0]
    got = cast(np.array([x]), fmt)[0]
    want = cast_exact(x, fmt)
    assert got == want or (math.isnan(got) and math.isnan(want))
    assert math.copysign(1, got) == math.copysign(1, want) or math.isnan(got)


@pytest.mark.parametrize("name", BIT_CHECKED)
def test_many_random_float64_inputs_like_ml_dtypes(name):
    """2 * 10^5 random float64 values per format (random bit patterns and wide-range normals), as above."""
    fmt = get_format(name)
    rng = np.random.default_rng(97)
    x = np.concatenate([rng.integers(0, 2 ** 63, 100_000, dtype=np.int64).view(np.float64),
                        rng.standard_normal(100_000) * np.ldexp(1.0, rng.integers(-40, 40, 100_000))])
    with np.errstate(over="ignore", invalid="ignore"):
        x32 = x.astype(np.float32).astype(np.float64)
    keep = _comparable(fmt, x32)
    x, x32 = x[keep], x32[keep]
    assert np.array_equal(ours_codes(cast(x32, "fp32"), fmt), ml_codes(x, name))
    exact32 = x == x32
    assert np.array_equal(ours_codes(x[exact32], fmt), ml_codes(x[exact32], name))


def test_ml_dtypes_double_rounds_float64():
    """Why the float64 comparison goes through float32: x = 1 + 2^-4 + 2^-40 lies above the midpoint of the
    fp8-e4m3fn neighbours 1 and 1.125, so it rounds to 1.125; float32 first rounds it to the midpoint, whose tie
    goes to the even 1. Ours is the exact rounding."""
    x = 1 + 2.0 ** -4 + 2.0 ** -40
    assert cast(np.array([x]), "fp8-e4m3fn")[0] == 1.125 == cast_exact(Fraction(x), "fp8-e4m3fn")
    assert float(np.array([x]).astype(ml_dtypes.float8_e4m3fn)[0]) == 1.0


def test_ml_dtypes_e8m0fnu_rounds_float32_subnormals_up():
    """The one place where ml_dtypes' float8_e8m0fnu is not the nearest rounding of a float32: 1.25 * 2^-127 is
    nearer to 2^-127 than to 2^-126 (distances 2^-129 and 3 * 2^-129), ml_dtypes gives 2^-126. Ours agrees with
    the exact rounding; everywhere else (above) the two agree bit for bit."""
    x = np.array([1.25 * 2.0 ** -127, 1.4 * 2.0 ** -127])
    assert list(cast(x, "float8_e8m0fnu")) == [2.0 ** -127, 2.0 ** -127]
    assert [cast_exact(float(v), "float8_e8m0fnu") for v in x] == [2.0 ** -127, 2.0 ** -127]
    assert list(x.astype(ml_dtypes.float8_e8m0fnu).astype(np.float64)) == [2.0 ** -126, 2.0 ** -126]


def test_unsigned_zero_and_exponent_only_formats():
    """fnuz: no -0 (a negative value rounding to zero gives +0; the -0 code is the NaN); e8m0fnu: zero, negative
    values, inf and NaN give NaN, values below 2^-127 give 2^-127 in every mode, overflow gives NaN."""
    fz = get_format("fp8-e4m3fnuz")
    for v in (-0.0, -1e-30):
        for mode in DETERMINISTIC:
            if mode in ("toward-negative", "to-odd") and v != 0:    # these give -min_subnormal
                assert cast(np.array([v]), fz, mode)[0] == -fz.min_subnormal
                continue
            r = cast(np.array([v]), fz, mode)[0]
            assert r == 0 and not np.signbit(r) and not np.signbit(cast_exact(v, fz, mode))
    e8 = get_format("fp8-e8m0fnu")
    for v in (0.0, -0.0, -2.0, -np.inf, np.inf, np.nan, 1.5 * 2.0 ** 127):
        assert math.isnan(cast(np.array([v]), e8)[0]) and math.isnan(cast_exact(v, e8))
    for mode in DETERMINISTIC:
        assert cast(np.array([2.0 ** -140]), e8, mode)[0] == 2.0 ** -127 == cast_exact(2.0 ** -140, e8, mode)
    assert cast(np.array([1.5 * 2.0 ** 127]), "fp8-e8m0fnu-sat")[0] == 2.0 ** 127


# ---------------------------------------------------------------- every path equals the exact reference
formats_st = st.one_of(
    st.builds(lambda e, m, sub, spec, sat, b: FloatFormat(e, m, sub, spec, sat,
                                                          exp_bias=None if b is None else b % (2 ** e + 1)),
              st.integers(2, 8), st.integers(1, 10), st.booleans(), st.sampled_from(["ieee", "fn", "none", "fnuz"]),
              st.booleans(), st.none() | st.integers(1, 12)),
    st.builds(lambda e, sat: FloatFormat(e, 0, False, "fnu", sat), st.integers(2, 8), st.booleans()),
    st.sampled_from([get_format(n) for n in SHARED]))


@settings(max_examples=300, deadline=None)
@given(fmt=formats_st, x=st.floats(allow_nan=True, allow_infinity=True, width=64),
       mode=st.sampled_from(DETERMINISTIC))
def test_numpy_torch_scalar_casts_equal_exact_reference(fmt, x, mode):
    """Every special kind (ieee, fn, none, fnuz, fnu), any bias, every deterministic mode: the numpy, torch and
    scalar casts equal the exact rounding of the exact value of x, sign of zero included."""
    torch = pytest.importorskip("torch")
    want = cast_exact(x, fmt, mode)
    for got in (cast(np.array([x]), fmt, mode)[0], scalar_caster(fmt, mode)(x),
                float(cast_torch(torch.tensor([x], dtype=torch.float64), fmt, mode)[0])):
        assert (math.isnan(got) and math.isnan(want)) or \
            (got == want and math.copysign(1, got) == math.copysign(1, want)), (fmt, x, mode, got, want)


def _neighbours(q: Fraction, fmt: FloatFormat):
    """The format values just below and above q (exact), from the sorted value list."""
    vals = [Fraction(float(v)) for v in fmt.all_values() if np.isfinite(v)]
    lo = max(v for v in vals if v <= q)
    hi = min(v for v in vals if v >= q)
    return lo, hi


small_formats_st = st.builds(lambda e, m, sub, spec: FloatFormat(e, m, sub, spec), st.integers(2, 5),
                             st.integers(1, 5), st.booleans(), st.sampled_from(["ieee", "fn", "none", "fnuz"]))


@settings(max_examples=300, deadline=None)
@given(fmt=small_formats_st, num=st.integers(-10 ** 6, 10 ** 6), den=st.integers(1, 10 ** 4))
def test_ties_away_and_to_odd_follow_their_definitions(fmt, num, den):
    """Within the range, with the two neighbours lo <= q <= hi taken from the list of all values (fractions):
    ties-away is the nearer one, the one of larger magnitude on a tie; to-odd is q itself when representable, else
    the neighbour whose code has its last bit set (the integer significand is odd; without subnormals, between 0
    and 2^emin, the nonzero one)."""
    q = Fraction(num, den)
    assume(abs(q) <= fmt.max_exact)
    lo, hi = _neighbours(q, fmt)
    away = Fraction(cast_exact(q, fmt, "nearest-away"))
    if q - lo != hi - q:
        assert away == (lo if q - lo < hi - q else hi)
    else:
        assert away == (hi if abs(hi) > abs(lo) else lo)
    odd = cast_exact(q, fmt, "to-odd")
    if lo == hi:
        assert Fraction(odd) == q
    elif 0 in (lo, hi) and not fmt.subnormals:
        # between 0 and +-2^emin without subnormals both codes end in 0: the grid there is 2^emin, on which
        # 2^emin has the odd integer significand 1 (rounding.py)
        assert Fraction(odd) == (lo if lo != 0 else hi)
    else:
        codes = fmt.encode(np.array([float(lo), float(hi)]))
        assert [Fraction(odd)] == [v for v, c in zip((lo, hi), codes) if c & 1]


@settings(max_examples=300, deadline=None)
@given(e=st.integers(3, 8), m=st.integers(1, 20), x=st.floats(-12.0, 12.0) | st.floats(-1e-3, 1e-3))
def test_round_to_odd_then_nearest_is_nearest(e, m, x):
    """The property round-to-odd exists for (Boldo and Melquiond 2008): rounding to odd with two more bits, then to
    nearest-even, is the nearest-even rounding (no double-rounding error), subnormals included."""
    small, wide = FloatFormat(e, m), FloatFormat(e, m + 2)      # |x| <= 12 < max of every e >= 3, m >= 1
    two_step = cast(cast(np.array([x]), wide, "to-odd"), small, "nearest-even")[0]
    assert two_step == cast(np.array([x]), small, "nearest-even")[0]


def test_ties_away_and_to_odd_against_pychop():
    """pychop's Chop(rmode=8) (ties away) and rmode=9 (to odd) on random values over each format's whole range.
    pychop 0.6.2 reads the sign of the magnitude's tie backwards in rmode 8 (negative ties go toward zero), so the
    comparison uses the symmetry round(-x) = -round(x) and feeds it |x|; its rmode 9 moves exact values with an even
    significand by one unit (1.0 -> 1.125 in e4m3), so to-odd is compared on inexact values. Both defects are
    checked to be the only differences: there, ours equals the exact reference."""
    pychop = pytest.importorskip("pychop")
    from pychop import Chop
    pychop.backend("numpy")
    rng = np.random.default_rng(8)
    for e, m in ((5, 10), (8, 7), (4, 3), (5, 2), (3, 4)):
        fmt = get_format(f"e{e}m{m}")
        n = 20_000
        x = rng.uniform(1, 2, n) * np.ldexp(1.0, rng.integers(fmt.emin - m - 2, fmt.emax, n))
        grid = np.ldexp(rng.integers(1, 2 ** (m + 4), n).astype(float), rng.integers(fmt.emin - m - 1,
                                                                                    fmt.emax - m - 3, n))
        x = np.concatenate([x, grid])               # grid: many exact ties and exact values
        x = x[x <= fmt.max_finite] * rng.choice([-1.0, 1.0], len(x[x <= fmt.max_finite]))
        ours = cast(x, fmt, "nearest-away")
        ref = np.sign(x) * np.asarray(Chop(exp_bits=e, sig_bits=m, rmode=8)(np.abs(x)), dtype=np.float64)
        bad = ours != ref
        for v, o in zip(x[bad], ours[bad]):         # pychop's 1e-6 tie window: near-ties it calls ties
            assert o == cast_exact(float(v), fmt, "nearest-away")
        assert bad.mean() < 1e-3, (e, m, x[bad][:4])
        odd = cast(x, fmt, "to-odd")
        inexact = cast(x, fmt, "toward-zero") != x
        pref = np.asarray(Chop(exp_bits=e, sig_bits=m, rmode=9)(x.copy()), dtype=np.float64)
        assert np.array_equal(odd[inexact], pref[inexact]), (e, m)
        assert np.array_equal(odd[~inexact], x[~inexact])
        assert inexact.sum() > n // 2 and (~inexact).sum() > 100


@settings(max_examples=200, deadline=None)
@given(fmt=st.sampled_from(["fp8-e4m3fn", "fp6-e3m2fn", "e5m7", "bf16", "e8m52", "fp8-e5m2fnuz"]),
       i=st.integers(0, 2 ** 16), j=st.integers(0, 2 ** 16), mode=st.sampled_from(DETERMINISTIC), data=st.data())
def test_rounded_sum_of_two_values_is_exact_in_every_mode(fmt, i, j, mode, data):
    """Rounder.add / scalar_adder (the op policy's additions) equal the exact rounding of the exact sum, in every
    mode (ties-away and to-odd use the TwoSum error as the directed modes do; e8m52 checks the m = 52 branch)."""
    f = get_format(fmt)
    if f.bits <= 16:
        vals = f.all_values()
        a, b = float(vals[i % len(vals)]), float(vals[j % len(vals)])
    else:
        a = float(cast(np.array([data.draw(st.floats(-1e6, 1e6))]), f)[0])
        b = float(cast(np.array([data.draw(st.floats(-1e-3, 1e-3)) * data.draw(st.sampled_from([1.0, 2.0 ** -60]))]),
                       f)[0])
    want = cast_exact(Fraction(a) + Fraction(b), f, mode)
    got = Rounder(f, mode).add(np.array([a]), np.array([b]))[0]
    one = scalar_adder(f, mode)(a, b)
    for g in (got, one):
        assert (math.isnan(g) and math.isnan(want)) or g == want, (fmt, mode, a, b, g, want)


# ---------------------------------------------------------------- stochastic rounding with a seed
def test_stochastic_cast_is_seeded_and_follows_its_rule():
    """cli_cast draws u = k / 2^53 per value from numpy's default_rng(seed) and rounds away from zero iff u < the
    fractional distance: recomputed here with the same draws and exact fractions."""
    vals = ["0.1", "-1/3", "pi/4", "2**-3", "1e-3"] * 8
    a = cli_cast(vals, "bf16", "stochastic", seed=5)
    assert a == cli_cast(vals, "bf16", "sr", seed=5) and a["seed"] == 5
    assert a["outputs"] != cli_cast(vals, "bf16", "stochastic", seed=6)["outputs"]
    rng = np.random.default_rng(5)
    from lrnnkit.precision.cast import exact_decimal, parse_exact_value
    for v, out in zip(vals, a["outputs"]):
        u = Fraction(int(rng.integers(0, 2 ** 53)), 2 ** 53)
        assert out == exact_decimal(cast_exact(parse_exact_value(v), "bf16", "stochastic", u))


# ---------------------------------------------------------------- precision cast: values and expressions
def _cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("args", [
    ["precision", "cast", "0.1", "--", "-3.5", "--format", "fp8-e4m3fn"],
    ["precision", "cast", "0.1", "-3.5", "--format", "fp8-e4m3fn"],
    ["precision", "cast", "--format", "fp8-e4m3fn", "--", "0.1", "-3.5"],
    ["precision", "cast", "--format=fp8-e4m3fn", "0.1", "-3.5"],
    ["precision", "cast", "0.1", "--format", "fp8-e4m3fn", "-3.5"],
])
def test_negative_values_in_every_position(capsys, args):
    rc, out, err = _cli(capsys, *args)
    assert rc == 0, err
    assert out.splitlines() == ["0.1 -> 0.1015625", "-3.5 -> -3.5"]


def test_negative_value_first_and_rounding_names_starting_with_dash(capsys):
    rc, out, err = _cli(capsys, "precision", "cast", "-3.5", "-1/3", "-inf", "-pi/4", "--format", "bf16",
                        "--rounding", "-inf")
    assert rc == 0, err
    # rounding toward -inf
    assert out.splitlines() == ["-3.5 -> -3.5", "-1/3 -> -0.333984375", "-inf -> -inf", "-pi/4 -> -0.7890625"]


@pytest.mark.parametrize("expr,exact", [
    ("1/sqrt(2)", None), ("2**-3", Fraction(1, 8)), ("pi/4", None), ("-2**-3", Fraction(-1, 8)),
    ("sqrt(2)**2", Fraction(2)), ("3*(1/3)", Fraction(1)), ("(1+sqrt(2))**2 - 3 - 2*sqrt(2)", Fraction(0)),
    ("0.1*3", Fraction(3, 10)), ("exp(-1)", None), ("cos(pi/3)", Fraction(1, 2)), ("1e-3", Fraction(1, 1000)),
])
def test_symbolic_expressions_cast_exactly(expr, exact):
    """Rational expressions round as their exact value (0.1 is 1/10, not a float64); irrational ones agree with a
    300-bit mpmath evaluation rounded at the format's precision, in several modes."""
    import mpmath
    for fmt in ("bf16", "fp8-e4m3fn", "fp32"):
        f = get_format(fmt)
        for mode, r in (("nearest-even", "n"), ("toward-zero", "d"), ("toward-positive", "c")):
            got = cast_exact(expr, f, mode)
            if exact is not None:
                assert got == cast_exact(exact, f, mode), (expr, fmt, mode)
                continue
            with mpmath.workprec(300):
                ref = {"1/sqrt(2)": lambda: 1 / mpmath.sqrt(2), "pi/4": lambda: mpmath.pi / 4,
                       "exp(-1)": lambda: mpmath.exp(-1)}[expr]()
            want = float(mpmath.mpf(mpmath.libmp.mpf_pos(ref._mpf_, f.precision, r)))
            assert got == want, (expr, fmt, mode, got, want)


@pytest.mark.parametrize("bad,why", [
    ("__import__('os')", "the function '__import__' is not allowed"), ("x", "the name 'x'"),
    ("2^3", "use \\*\\*"), ("(2).real", "Attribute"), ("1/0", "division by zero"), ("log(-1)", "not a real"),
    ("sqrt(-2)", "not a real"), ("10**10**10", "beyond"), ("exp(exp(exp(10)))", "beyond"), ("1j", "1j"),
    ("lambda: 1", "Lambda"), ("[1][0]", "Subscript"), ("tan(pi/2)", "not a finite"), ("one", "not an exact number"),
])
def test_unsafe_or_bad_expressions_are_refused_in_one_line(capsys, bad, why):
    with pytest.raises(InputError, match=why):
        cast_exact(bad, "bf16")
    rc, out, err = _cli(capsys, "precision", "cast", "--format", "bf16", "--", bad)
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err and out == ""


# ---------------------------------------------------------------- the docs table says what the code does
def test_docs_format_table_matches_the_code():
    """docs/formats.rst lists every named format with its ml_dtypes name and its max, as the code has them."""
    text = (Path(REPO) / "docs" / "formats.rst").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip().strip("`") for c in line.split("|")[1:-1]] if line.startswith("|") else []
        if cells and cells[0] and cells[0] != "lrnnkit name" and not set(cells[0]) <= set("-="):
            rows[cells[0]] = cells
    for name in format_names():
        f = get_format(name)
        assert name in rows, name
        ml = rows[name][1]
        assert ml == (f.ml_dtypes_name or "-") or (name == "bf16" and ml == "bfloat16") or \
            (name in ("fp16", "fp32", "fp64") and ml.startswith("numpy")), (name, ml)
        assert repr(f.max_finite) in rows[name][3] or f"{f.max_finite:g}" in rows[name][3], (name, rows[name][3])
