"""Casts into number formats (lrnnkit.precision): formats, the vectorized numpy / torch / scalar casts, the exact
reference, and cross-checks against independent libraries (ml_dtypes, numpy, torch, mpmath, pychop)."""
from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.exact import cos2pi, sin2pi
from lrnnkit.precision.cast import (cast, cast_exact, cast_torch, exact_decimal, parse_exact_value,
                                    scalar_caster)
from lrnnkit.precision.formats import FloatFormat, get_format
from lrnnkit.precision.rounding import ROUNDINGS

DETERMINISTIC = [r for r in ROUNDINGS if r != "stochastic"]

LIBRARY_FORMATS = [
    ("fp16", np.float16), ("bf16", ml_dtypes.bfloat16), ("fp8-e4m3fn", ml_dtypes.float8_e4m3fn),
    ("fp8-e5m2", ml_dtypes.float8_e5m2), ("fp8-e4m3-ieee", ml_dtypes.float8_e4m3),
    ("fp4-e2m1", ml_dtypes.float4_e2m1fn), ("fp32", np.float32),
]


def same_bits(a, b) -> np.ndarray:
    """Bitwise equality of float64 arrays, any NaN equal to any NaN."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return (a.view(np.uint64) == b.view(np.uint64)) | (np.isnan(a) & np.isnan(b))


@np.errstate(over="ignore", invalid="ignore")
def _edge_cases_f32(fmt: FloatFormat) -> np.ndarray:
    """Every value of the format (when small), the midpoints between neighbours (ties), the midpoints +- one float32
    ulp, the overflow threshold, subnormal boundaries, zeros, infinities, NaN; all exactly float32."""
    if fmt.bits <= 16:
        v = fmt.all_values()
    else:
        v = np.concatenate([np.ldexp(1.0, np.arange(-149, 128)), np.ldexp(1.0 + 2.0 ** -23, np.arange(-126, 127))])
        v = np.concatenate([v, -v])
    v = np.unique(v[np.isfinite(v)])
    mids = (v[:-1] + v[1:]) / 2
    top = fmt.max_finite
    ulp_top = 2.0 ** (fmt.emax - fmt.man_bits)
    extra = [top, top + ulp_top / 2, top + ulp_top, 2 * top, 1e30, fmt.min_subnormal / 2, fmt.min_subnormal / 4,
             fmt.min_normal, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45]
    x = np.concatenate([v, mids, extra, -np.asarray(extra)]).astype(np.float32)
    x = x[np.isfinite(x) | np.isnan(x) | np.isinf(x)]
    up = np.nextafter(x, np.float32(np.inf))
    down = np.nextafter(x, np.float32(-np.inf))
    return np.concatenate([x, up, down])


@pytest.mark.parametrize("name,dtype", LIBRARY_FORMATS, ids=[n for n, _ in LIBRARY_FORMATS])
def test_bit_exact_with_libraries_on_float32(name, dtype):
    """Nearest-even casts of float32 inputs agree bit for bit with numpy / ml_dtypes (one rounding: float32 -> the
    format), on 10^6 random values (random bit patterns and wide-range normals) plus the edge cases."""
    rng = np.random.default_rng(1234)
    fmt = get_format(name)
    pats = rng.integers(0, 2 ** 32, 500_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    wide = (rng.standard_normal(500_000) * np.ldexp(1.0, rng.integers(-30, 30, 500_000))).astype(np.float32)
    x = np.concatenate([pats, wide, _edge_cases_f32(fmt)])
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(dtype).astype(np.float64)
    ours = cast(x, fmt)
    ok = same_bits(ours, ref)
    if name == "fp4-e2m1":
        # fp4 has no NaN: ml_dtypes turns NaN into -0, we keep NaN as "undefined" (documented in cast())
        ok |= np.isnan(x)
    assert ok.all(), (x[~ok][:5], ref[~ok][:5], ours[~ok][:5])


def test_bit_exact_with_torch_on_float32():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        _edge_cases_f32(get_format("bf16"))])
    t = torch.from_numpy(x)
    pairs = [("fp16", torch.float16), ("bf16", torch.bfloat16)]
    if hasattr(torch, "float8_e4m3fn"):
        # torch saturates float8_e4m3fn conversions (overflow and inf -> +-448), unlike ml_dtypes (NaN): it is our
        # saturating variant e4m3fn-sat
        pairs += [("e4m3fn-sat", torch.float8_e4m3fn), ("fp8-e5m2", torch.float8_e5m2)]
    for name, dt in pairs:
        ref = t.to(dt).to(torch.float64).numpy()
        ours = cast(x, name)
        ok = same_bits(ours, ref)
        assert ok.all(), (name, x[~ok][:5], ref[~ok][:5], ours[~ok][:5])


CUSTOM = ["e5m7", "e4m3fn", "e3m2-ftz", "e2m1-nonan", "e4m3-sat", "fp16", "bf16", "e8m23", "e11m40", "fp64",
          "e6m0", "e5m2fn-sat-ftz", "e11m52-ftz", "e3m4"]


def _probe_values(fmt: FloatFormat, rng, n: int) -> np.ndarray:
    """Random float64 values over the whole range of the format, grid points, exact ties and their float64
    neighbours, and specials."""
    ex = rng.integers(fmt.emin - fmt.man_bits - 3, fmt.emax + 3, n)
    x = rng.uniform(1, 2, n) * np.ldexp(1.0, ex) * rng.choice([-1, 1], n)
    q = np.clip(ex, fmt.emin, None) - fmt.man_bits - 1
    grid = np.ldexp(rng.integers(0, 2 ** (fmt.man_bits + 3), n).astype(float), q) * rng.choice([-1, 1], n)
    spec = [0.0, -0.0, np.inf, -np.inf, np.nan, fmt.max_finite, -fmt.max_finite, 5e-324, -5e-324,
            fmt.min_subnormal / 2, fmt.min_normal / 2]
    x = np.concatenate([x, grid, spec])
    with np.errstate(over="ignore"):
        return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


@pytest.mark.parametrize("name", CUSTOM)
def test_float64_inputs_match_exact_rounding(name):
    """numpy, torch and scalar casts of float64 inputs equal the exact rounding of the input's exact value, for
    every deterministic mode (ties, subnormals, flush, saturation, overflow, signed zero, NaN, inf)."""
    torch = pytest.importorskip("torch")
    fmt = get_format(name)
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    x = _probe_values(fmt, rng, 250)
    for mode in DETERMINISTIC:
        ref = np.array([cast_exact(float(v), fmt, mode) for v in x])
        ours = cast(x, fmt, mode)
        tt = cast_torch(torch.from_numpy(x), fmt, mode).numpy()
        c1 = scalar_caster(fmt, mode)
        sc = np.array([c1(float(v)) for v in x])
        for got, what in ((ours, "numpy"), (tt, "torch"), (sc, "scalar")):
            ok = same_bits(got, ref)
            assert ok.all(), (name, mode, what, x[~ok][:4], got[~ok][:4], ref[~ok][:4])


# ---------------------------------------------------------------- double rounding in the libraries
def test_libraries_double_round_float64_to_bfloat16():
    """ml_dtypes and torch convert float64 -> bfloat16 through float32: two roundings. x = 1 + 2^-8 + 2^-30 lies just
    above the midpoint between the bf16 neighbours 1 and 1 + 2^-7, so it rounds to 1 + 2^-7; float32 first rounds
    it to the midpoint 1 + 2^-8 itself, whose tie then goes to the even 1. Ours is exact; the libraries are one unit
    off. This test pins the libraries' behaviour as documented in docs/algorithms.rst."""
    x = 1 + 2.0 ** -8 + 2.0 ** -30
    exact = cast_exact(Fraction(1) + Fraction(1, 2 ** 8) + Fraction(1, 2 ** 30), "bf16")
    assert exact == 1 + 2.0 ** -7
    assert cast(np.array([x]), "bf16")[0] == exact
    assert float(np.array([x]).astype(ml_dtypes.bfloat16)[0]) == 1.0          # one unit off
    torch = pytest.importorskip("torch")
    assert float(torch.tensor([x], dtype=torch.float64).to(torch.bfloat16)[0]) == 1.0  # one unit off
    # the same mechanism for float16: x = 1 + 2^-11 + 2^-40 (midpoint of 1 and 1 + 2^-10, plus a bit)
    y = 1 + 2.0 ** -11 + 2.0 ** -40
    assert cast(np.array([y]), "fp16")[0] == 1 + 2.0 ** -10 == cast_exact(y, "fp16")
    assert float(np.array([y]).astype(np.float16)[0]) == 1 + 2.0 ** -10                # numpy: one rounding
    assert float(np.float32(y)) == 1 + 2.0 ** -11                                     # float32 hits the tie
    assert float(torch.tensor([y], dtype=torch.float64).to(torch.float16)[0]) in (1.0, 1 + 2.0 ** -10)


def test_random_normals_double_rounding_is_the_only_difference():
    """Over 10^6 random normal float64 values, every disagreement between ml_dtypes' float64 -> bfloat16 and ours is a
    double rounding: ours equals the exact rounding, ml_dtypes equals float32-then-bf16. There are some (docs/algorithms.rst:
    about 7 per 10^6)."""
    rng = np.random.default_rng(2024)
    x = rng.standard_normal(1_000_000)
    ours = cast(x, "bf16")
    lib = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    bad = np.nonzero(~same_bits(ours, lib))[0]
    assert 0 < len(bad) < 100
    for i in bad:
        assert ours[i] == cast_exact(float(x[i]), "bf16")
        assert lib[i] == cast(np.float32(x[i]).astype(np.float64), "bf16")
        assert abs(ours[i] - lib[i]) == 2.0 ** (math.floor(math.log2(abs(ours[i]))) - 7) or \
            abs(ours[i] - lib[i]) == 2.0 ** (math.floor(math.log2(abs(lib[i]))) - 7)


# ---------------------------------------------------------------- custom formats against independent oracles
formats_st = st.builds(
    lambda e, m, sub, spec, sat: FloatFormat(e, m, sub, spec if not (spec == "fn" and m == 0) else "ieee", sat),
    st.integers(2, 8), st.integers(0, 12), st.booleans(), st.sampled_from(["ieee", "fn", "none"]), st.booleans())


@settings(max_examples=200, deadline=None)
@given(fmt=formats_st, x=st.floats(allow_nan=True, allow_infinity=True, width=64),
       mode=st.sampled_from(DETERMINISTIC))
def test_cast_equals_exact_reference_hypothesis(fmt, x, mode):
    got = cast(np.array([x]), fmt, mode)[0]
    assert same_bits(got, cast_exact(x, fmt, mode))
    assert same_bits(scalar_caster(fmt, mode)(x), got)


@settings(max_examples=200, deadline=None)
@given(fmt=formats_st, num=st.integers(1, 10 ** 30), den=st.integers(1, 10 ** 30), neg=st.booleans(),
       mode=st.sampled_from(["nearest-even", "toward-zero", "toward-positive", "toward-negative"]))
def test_exact_reference_against_mpmath(fmt, num, den, neg, mode):
    """In the normal range (no overflow, no subnormal), the exact cast of p/q equals mpmath's correctly rounded
    division at precision m + 1 with the same rounding direction (an independent implementation; mpmath has no
    ties-away or round-to-odd: those are checked against fractions and pychop in precision/test_formats.py)."""
    from mpmath.libmp import from_int, mpf_div, to_float
    q = Fraction(-num if neg else num, den)
    a = abs(q)
    if not (Fraction(fmt.min_normal) <= a <= fmt.max_exact):
        return
    rnd = {"nearest-even": "n", "toward-zero": "d", "toward-positive": "c", "toward-negative": "f"}[mode]
    ref = to_float(mpf_div(from_int(q.numerator), from_int(q.denominator), fmt.precision, rnd))
    got = cast_exact(q, fmt, mode)
    if abs(ref) > fmt.max_finite:   # mpmath has no exponent limit: the value rounded past max
        assert abs(got) == fmt.max_finite or math.isinf(got) or math.isnan(got)
    else:
        assert got == ref


def test_exact_cast_of_cyclotomic_values_against_mpmath():
    """cos(2 pi / m) and sin(2 pi / m) (lrnnkit.exact.Cyc) cast exactly; compared with a 300-bit mpmath evaluation
    rounded at the format's precision (these irrational values are far from any tie)."""
    import mpmath
    from mpmath.libmp import to_float
    for m in (3, 5, 7, 8, 12):
        for fmt in ("bf16", "fp16", "fp8-e4m3-ieee", "e5m7"):
            f = get_format(fmt)
            for val, fn in ((cos2pi(1, m), mpmath.cos), (sin2pi(1, m), mpmath.sin)):
                with mpmath.workprec(300):
                    ref = fn(2 * mpmath.pi / m)
                if isinstance(val, Fraction):   # rational (cos 2pi/3 = -1/2): the float oracle would miss the tie
                    continue
                for mode, r in (("nearest-even", "n"), ("toward-zero", "d"), ("toward-negative", "f")):
                    got = cast_exact(val, f, mode)
                    want = float(mpmath.mpf(mpmath.libmp.mpf_pos(ref._mpf_, f.precision, r)))
                    assert got == want, (m, fmt, mode, got, want)


# ---------------------------------------------------------------- stochastic rounding
def test_stochastic_rounding_probability_rule():
    """Stochastic rounding gives only the two neighbours, rounds away from zero with probability equal to the
    fractional distance (binomial test at 6 sigma), is unbiased, and is reproducible from its seed."""
    fmt = get_format("bf16")
    lo, hi = 1.0, 1.0 + 2.0 ** -7
    for frac in (0.1, 0.5, 0.9):
        x = lo + frac * (hi - lo)
        n = 200_000
        y = cast(np.full(n, x), fmt, "stochastic", seed=11)
        assert set(np.unique(y)) <= {lo, hi}
        k = int((y == hi).sum())
        sd = math.sqrt(n * frac * (1 - frac))
        assert abs(k - n * frac) < 6 * sd
        assert np.array_equal(y, cast(np.full(n, x), fmt, "stochastic", seed=11))
        yn = cast(np.full(n, -x), fmt, "stochastic", seed=11)
        assert np.array_equal(yn, -y)   # magnitude rounding, same draws
    # exactly representable values never move
    v = fmt.all_values() if fmt.bits <= 16 else np.array([1.0, 0.5, -3.0])
    assert np.array_equal(cast(v, fmt, "stochastic", seed=3), v)


def test_stochastic_rounding_torch_statistics():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    x = torch.full((100_000,), 1.0 + 0.25 * 2.0 ** -7, dtype=torch.float64)
    y = cast_torch(x, "bf16", "stochastic", generator=g)
    k = int((y > 1.0).sum())
    assert abs(k - 25_000) < 6 * math.sqrt(100_000 * 0.25 * 0.75)


# ---------------------------------------------------------------- pychop (optional peer)
def test_rounding_modes_against_pychop():
    pychop = pytest.importorskip("pychop")
    from pychop import Chop
    pychop.backend("numpy")
    rng = np.random.default_rng(3)
    for e, m in ((5, 10), (8, 7), (4, 3), (5, 7)):
        fmt = get_format(f"e{e}m{m}")
        x = rng.standard_normal(20_000) * np.ldexp(1.0, rng.integers(fmt.emin - m - 2, fmt.emax, 20_000))
        # pychop 0.6.2 mishandles overflow (e.g. 118419.6 in e5m10 -> 0.0, toward-zero -> inf): compare in range
        x = x[np.abs(x) <= fmt.max_finite]
        for rm, mode in ((1, "nearest-even"), (2, "toward-positive"), (3, "toward-negative"), (4, "toward-zero")):
            ref = np.asarray(Chop(exp_bits=e, sig_bits=m, rmode=rm)(x.copy()), dtype=np.float64)
            ok = same_bits(cast(x, fmt, mode), ref)
            assert ok.all(), (e, m, mode, x[~ok][:3])


# ---------------------------------------------------------------- formats
def test_format_parameters():
    f = get_format("fp8-e4m3fn")
    assert (f.max_finite, f.min_normal, f.min_subnormal, f.epsilon) == (448.0, 2.0 ** -6, 2.0 ** -9, 0.125)
    assert get_format("fp8-e4m3-ieee").max_finite == 240.0
    assert get_format("fp8-e5m2").max_finite == 57344.0
    assert get_format("fp4-e2m1").max_finite == 6.0 and get_format("fp4-e2m1").min_subnormal == 0.5
    assert get_format("bf16").max_finite == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert get_format("fp16").max_finite == 65504.0 and get_format("fp16").min_subnormal == 2.0 ** -24
    assert get_format("tf32").epsilon == 2.0 ** -10
    assert get_format("fp64").max_finite == np.finfo(np.float64).max
    assert get_format("fp32").min_subnormal == float(np.finfo(np.float32).smallest_subnormal)
    assert get_format("e5m7").label == "e5m7" and get_format("E4M3FN").special == "fn"
    assert not get_format("e3m2-ftz").subnormals and get_format("e3m2-sat").saturate


@pytest.mark.parametrize("name,dtype", [("fp8-e4m3fn", ml_dtypes.float8_e4m3fn), ("fp8-e5m2", ml_dtypes.float8_e5m2),
                                        ("fp8-e4m3-ieee", ml_dtypes.float8_e4m3), ("fp4-e2m1", ml_dtypes.float4_e2m1fn),
                                        ("fp16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_enumeration_matches_library_decoding(name, dtype):
    fmt = get_format(name)
    nbytes = np.dtype(dtype).itemsize
    codes = np.arange(2 ** fmt.bits, dtype=np.uint64)
    raw = codes.astype(np.uint8 if nbytes == 1 else np.uint16).view(dtype).astype(np.float64)
    if name == "fp4-e2m1":   # ml_dtypes stores fp4 in a byte: the low 4 bits
        raw = codes.astype(np.uint8).view(dtype).astype(np.float64)
    ours = fmt.decode_bits(codes.astype(np.int64))
    assert same_bits(ours, raw).all()
    vals = fmt.all_values()
    assert np.all(np.diff(vals) >= 0) and len(vals) == int(np.isfinite(raw).sum())
    # every enumerated value is a fixed point of the cast
    assert same_bits(cast(vals, fmt), vals).all()


def test_bad_format_and_rounding_names():
    with pytest.raises(InputError, match="unknown number format 'fp7'"):
        get_format("fp7")
    with pytest.raises(InputError, match="exponent bits"):
        get_format("e1m3")
    with pytest.raises(InputError, match="unknown rounding mode 'sideways'"):
        cast(np.array([1.0]), "bf16", "sideways")
    with pytest.raises(InputError, match="not an exact number"):
        parse_exact_value("1/0x")


def test_complex_rounds_part_by_part():
    z = np.array([1.0 + 2.0 ** -9 + 1j * (3.0 + 2.0 ** -7), -0.1 - 0.2j])
    got = cast(z, "bf16")
    assert same_bits(got.real, cast(z.real, "bf16")).all() and same_bits(got.imag, cast(z.imag, "bf16")).all()
    torch = pytest.importorskip("torch")
    gt = cast_torch(torch.from_numpy(z), "bf16").numpy()
    assert np.array_equal(gt, got)


def test_exact_decimal_strings():
    assert exact_decimal(cast_exact("0.1", "bf16")) == "0.10009765625"
    assert exact_decimal(cast_exact("-0", "fp16")) == "-0"
    assert exact_decimal(cast_exact("1e6", "fp16")) == "inf"
    assert exact_decimal(cast_exact("1e6", "fp8-e4m3fn")) == "nan"
    assert exact_decimal(cast_exact("1e6", "fp4-e2m1")) == "6"
    assert exact_decimal(cast_exact("1/3", "fp32", "toward-zero")) == "0.333333313465118408203125"
    assert exact_decimal(cast_exact("cos(2*pi/8)", "bf16")) == "0.70703125"
    assert exact_decimal(cast_exact("1e-7", "fp16")) == "0.00000011920928955078125"   # 2 * 2^-24, subnormal
    rng = np.random.default_rng(0)
    for v in cast(rng.standard_normal(200) * np.ldexp(1.0, rng.integers(-140, 120, 200)), "fp32"):
        assert Fraction(exact_decimal(v)) == Fraction(float(v))


def test_precision_one_ties_match_ml_dtypes_e8m0():
    """m = 0 formats (values 2^E): IEEE 754 leaves ties at precision 1 undefined. Our rule (even integer
    significand, so ties go up in magnitude) must agree with ml_dtypes' float8_e8m0fnu and with mpmath. Compared on
    random float32 values and every exact tie 1.5 * 2^k in the range where both formats are normal (e8m0fnu has no
    sign, no zero and a different bias, so its extreme codes are not compared)."""
    import ml_dtypes
    from lrnnkit.precision.cast import cast, cast_exact
    from lrnnkit.precision.formats import get_format
    fmt = get_format("e8m0")
    rng = np.random.default_rng()
    x = np.abs(rng.standard_normal(200_000).astype(np.float32)) * np.float32(2.0) ** rng.integers(-60, 60, 200_000)
    ties = (np.float32(1.5) * np.float32(2.0) ** np.arange(-60, 60)).astype(np.float32)
    x = np.concatenate([x, ties]).astype(np.float32)
    ref = x.astype(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    ours = cast(x.astype(np.float64), fmt, "nearest-even")
    assert np.array_equal(ours, ref)
    for v, want in [(3, 4.0), (Fraction(3, 2), 2.0), (Fraction(3, 4), 1.0), (-3, -4.0), (6, 8.0)]:
        assert cast_exact(Fraction(v), fmt, "nearest-even") == want
    # at the bottom without subnormals a tie between 0 and 2^emin goes to 0 (integer significand 0 is even)
    ftz = get_format("e2m0-ftz")
    half_min = Fraction(ftz.min_normal) / 2
    assert cast_exact(half_min, ftz, "nearest-even") == 0.0
    assert float(cast(np.array([float(half_min)]), ftz, "nearest-even")[0]) == 0.0
