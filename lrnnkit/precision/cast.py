"""Casting into a :class:`~lrnnkit.precision.formats.FloatFormat`: vectorized numpy and torch casts of float64 data,
and the exact reference cast of exact values (the ground truth every test compares against).

All results are stored as float64 (every value of every supported format is a float64). The cast is the function
``cast`` of paper 000, Appendix A.3: applied elementwise, and to complex numbers part by part.

Vectorized algorithm (numpy and torch, on the float64 bit pattern). A finite float64 ``x`` is ``S 2^(ex - 52)``
with the 53-bit significand ``S`` (implicit bit included) and ``ex = floor(log2 |x|)`` (``-1022`` for float64
subnormals). The format's quantum at ``x`` is ``2^q`` with ``q = max(ex, emin) - m`` (with subnormals), or ``q = emin``
below ``2^emin`` without subnormals. With ``shift = q - (ex - 52) >= 0`` the truncated magnitude is
``t = S >> shift`` and the discarded part ``r = S mod 2^shift``; the mode decides whether to add one (see
``rounding``); the result is ``(t + up) 2^q`` (exact in float64), followed by the overflow rule of the format.
Why hand-written: ml_dtypes covers only its fixed formats, rounds to nearest even only, and converts float64 to
bfloat16 and to its 8-, 6- and 4-bit formats through float32 (double rounding); pychop supports custom formats but
is much slower (benchmarks/RESULTS.md, section "limits"). For nearest-even, nearest-away and the directed modes, the normal range takes a shorter path on the
whole bit pattern (add a rounding increment, clear the low ``52 - m`` bits; a carry into the exponent is the correct
binade change).

Exact reference (:func:`cast_exact`): exact rounding of a Fraction / int / :class:`lrnnkit.exact.Cyc` / mpmath value /
decimal string, by exact rational arithmetic (Cyc values are bracketed by mpmath evaluations at increasing precision
until both ends of the bracket round to the same value; a Cyc is irrational, so this terminates).
"""
from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

import numpy as np

from ..errors import InputError
from .formats import FloatFormat, get_format
from .rounding import canonical_rounding
from ..errors import SizeLimitError
from ..exact import Cyc, cos2pi, sin2pi
from .. import limits
from ..limits import check_number_text
from .expr import exact_bracket, parse_expression

__all__ = ["cast", "cast_torch", "cast_exact", "parse_exact_value", "exact_decimal", "overflow_value"]

_SIGN = np.uint64(0x8000_0000_0000_0000)
_MAGMASK = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_EXPINF = np.uint64(0x7FF0_0000_0000_0000)
_FRACMASK = np.uint64((1 << 52) - 1)
_IMPLICIT = np.uint64(1 << 52)
_CHUNK = 1 << 16


def _overflow_away(mode: str, neg):
    """Per element (``neg``: boolean numpy array or torch tensor of sign bits): does an overflowing magnitude go
    away from zero (to the format's overflow value: inf, or max finite when saturating) rather than to the largest
    finite? Always for the nearest modes and stochastic rounding, never toward zero or to odd, for positives toward
    +inf and for negatives toward -inf."""
    if mode in ("nearest-even", "nearest-away", "stochastic"):
        return neg | ~neg
    if mode in ("toward-zero", "to-odd"):
        return neg & ~neg
    return ~neg if mode == "toward-positive" else neg


def _away_scalar(mode: str, neg: bool) -> bool:
    return bool(_overflow_away(mode, np.array([neg]))[0])


def _bits(v: float) -> np.uint64:
    return np.array([v], dtype=np.float64).view(np.uint64)[0]


def overflow_value(fmt: FloatFormat) -> float:
    """What a rounding that points away from zero gives on overflow (positive side)."""
    if fmt.saturate or fmt.special == "none":
        return fmt.max_finite
    return np.inf if fmt.special == "ieee" else np.nan


def _fix_zero_signs(fmt: FloatFormat, x: np.ndarray, res: np.ndarray) -> np.ndarray:
    """The formats without -0: "fnuz" gives +0 for every zero result; "fnu" (no zero, no sign) gives NaN for inputs
    <= 0 (and -0) and ``2^emin`` for positive values that round below it."""
    if fmt.special == "fnuz":
        return np.where(res == 0, 0.0, res)
    if fmt.special == "fnu":
        res = np.where(res == 0, fmt.min_normal, res)
        return np.where((x <= 0) | np.signbit(x), np.nan, res)
    return res


def _inf_value(fmt: FloatFormat) -> float:
    """What an infinite input becomes (positive side)."""
    if fmt.has_inf:
        return np.inf
    if fmt.saturate or fmt.special == "none":
        return fmt.max_finite
    return np.nan


# --------------------------------------------------------------------------- numpy
def cast(x, fmt, rounding: str = "nearest-even", rng=None, seed: int | None = None) -> np.ndarray:
    """Round every element of ``x`` (float16/32/64 or complex; any shape) into ``fmt``; float64 (or complex128) out.

    ``rounding`` is a mode of :mod:`lrnnkit.precision.rounding`. For ``stochastic``, pass ``rng`` (a
    ``numpy.random.Generator``) or ``seed``. NaN stays NaN (also for formats without NaN, where it marks an undefined
    value); infinities become inf (IEEE formats), NaN ("fn", "fnuz", "fnu"), or ±max ("none" / saturating formats).
    Formats without -0 give +0 ("fnuz") or NaN / ``2^emin`` ("fnu"), see :mod:`lrnnkit.precision.formats`."""
    fmt = get_format(fmt)
    mode = canonical_rounding(rounding)
    if mode == "stochastic" and rng is None:
        rng = np.random.default_rng(seed)
    a = np.asarray(x)
    if np.iscomplexobj(a):
        a = a.astype(np.complex128)
        return _cast_real(a.real, fmt, mode, rng) + 1j * _cast_real(a.imag, fmt, mode, rng)
    if a.dtype.kind not in "fiub":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise InputError(f"cast: not numeric data (dtype {a.dtype})") from None
    return _cast_real(a, fmt, mode, rng)


def _cast_real(a: np.ndarray, fmt: FloatFormat, mode: str, rng) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.ascontiguousarray(a, dtype=np.float64)
    shape = a.shape
    flat = a.reshape(-1)
    out = np.empty_like(flat)
    n = flat.size
    fast = mode not in ("stochastic", "to-odd") and fmt.man_bits < 52
    if fast:
        lo = np.uint64((fmt.emin + 1023) << 52)
        buf = (np.empty(min(n, _CHUNK), np.uint64), np.empty(min(n, _CHUNK), np.uint64), lo,
               _bits(fmt.max_finite) - lo)
    flagged = []
    for s in range(0, n, _CHUNK):
        xs = flat[s:s + _CHUNK]
        if fast:
            idx = _fast_chunk(xs, out[s:s + _CHUNK], fmt, mode, buf)
            if idx is not None:
                flagged.append(idx + s)
        else:
            out[s:s + _CHUNK] = _slow_chunk(xs, fmt, mode, rng)
    if flagged:  # all out-of-fast-range elements at once (one slow call instead of one per chunk)
        idx = np.concatenate(flagged)
        out[idx] = _slow_chunk(flat[idx], fmt, mode, None)
    if fmt.special in ("fnuz", "fnu"):
        out = _fix_zero_signs(fmt, flat, out)
    return out.reshape(shape)


def _fast_chunk(x: np.ndarray, out: np.ndarray, fmt: FloatFormat, mode: str, buf):
    """Deterministic modes, m < 52: round the whole bit pattern (sign included) by adding an increment and clearing
    the low 52 - m bits; valid where the input lies in [min_normal, max] in magnitude. Returns the indices of the
    other elements (subnormal range, overflow, inf, NaN), which the caller redoes with :func:`_slow_chunk`."""
    k = x.size
    bits = x.view(np.uint64)
    t1 = buf[0][:k]
    t2 = buf[1][:k]
    lo, span = buf[2], buf[3]
    s = 52 - fmt.man_bits
    mask = np.uint64((1 << s) - 1)
    o = out.view(np.uint64)
    if mode == "nearest-even" and fmt.man_bits == 0:
        # the integer significand of a normal value is 1 (odd): a tie always rounds up in magnitude
        t1[...] = np.uint64(1 << (s - 1))
    elif mode == "nearest-away":
        t1[...] = np.uint64(1 << (s - 1))
    elif mode == "nearest-even":
        np.right_shift(bits, np.uint64(s), out=t1)
        np.bitwise_and(t1, np.uint64(1), out=t1)
        np.add(t1, np.uint64((1 << (s - 1)) - 1), out=t1)
    elif mode == "toward-zero":
        t1[...] = 0
    else:
        np.right_shift(bits, np.uint64(63), out=t1)          # 1 for negative
        if mode == "toward-positive":
            np.subtract(t1, np.uint64(1), out=t1)             # all ones for positive
        else:
            np.negative(t1, out=t1)                           # all ones for negative
        np.bitwise_and(t1, mask, out=t1)
    np.add(bits, t1, out=o)
    np.bitwise_and(o, ~mask, out=o)
    # range check on the magnitude: min_normal <= |x| <= max
    np.bitwise_and(bits, _MAGMASK, out=t2)
    np.subtract(t2, lo, out=t2)                               # wraps around below lo
    if t2.max() > span:
        return np.flatnonzero(t2 > span)
    return None


def _slow_chunk(x: np.ndarray, fmt: FloatFormat, mode: str, rng) -> np.ndarray:
    bits = x.view(np.uint64)
    u = bits & _MAGMASK
    neg = bits >= _SIGN
    if fmt.man_bits == 52 and fmt.exp_bits == 11 and fmt.subnormals and mode != "stochastic":
        mag = u.view(np.float64).copy()
    else:
        mag = _generic_mag(u, neg, fmt, mode, rng)
    # overflow: only finite inputs with a rounded magnitude above max (inf/nan inputs handled below)
    maxf = fmt.max_finite
    over = mag > maxf
    finite = u < _EXPINF
    if over.any():
        away = _overflow_away(mode, neg)
        mag = np.where(over & finite, np.where(away, overflow_value(fmt), maxf), mag)
    if not finite.all():
        isnan = u > _EXPINF
        isinf = u == _EXPINF
        mag = np.where(isinf, _inf_value(fmt), mag)
        mag = np.where(isnan, np.nan, mag)
    return np.where(neg, -mag, mag)  # signed zero kept: -0.0 for negative inputs rounding to zero


def _generic_mag(u: np.ndarray, neg: np.ndarray, fmt: FloatFormat, mode: str, rng) -> np.ndarray:
    """Rounded magnitudes of the (finite or not) magnitude bit patterns ``u`` by the integer algorithm of the module
    docstring (every range, every mode). Non-finite inputs give garbage (patched by the caller)."""
    m = fmt.man_bits
    E = (u >> np.uint64(52)).astype(np.int64)
    frac = u & _FRACMASK
    S = np.where(E == 0, frac, frac | _IMPLICIT)
    ex = np.where(E == 0, -1022, E - 1023)
    if fmt.subnormals:
        q = np.maximum(ex, fmt.emin) - m
    else:
        q = np.where(E >= fmt.emin + 1023, ex - m, fmt.emin)
    shift = q - (ex - 52)  # >= 0
    big = shift > 63
    sh = np.minimum(shift, 63).astype(np.uint64)
    t = np.where(big, np.uint64(0), S >> sh)
    rmask = (np.uint64(1) << sh) - np.uint64(1)
    r = np.where(big, S, S & rmask)
    if mode == "nearest-even":
        half = np.where(shift > 0, np.uint64(1) << np.maximum(sh, np.uint64(1)) - np.uint64(1), np.uint64(1))
        half = np.where(big, np.uint64(1 << 62), half)
        odd = (t & np.uint64(1)) == np.uint64(1)  # parity of the integer significand (see rounding.py)
        up = (r > half) | ((r == half) & odd)
    elif mode == "nearest-away":
        half = np.where(shift > 0, np.uint64(1) << np.maximum(sh, np.uint64(1)) - np.uint64(1), np.uint64(1))
        half = np.where(big, np.uint64(1 << 62), half)
        up = (r >= half) & (shift > 0)
    elif mode == "to-odd":
        up = (r != 0) & ((t & np.uint64(1)) == np.uint64(0))
    elif mode == "toward-zero":
        up = np.zeros(u.shape, dtype=bool)
    elif mode == "toward-positive":
        up = (r != 0) & ~neg
    elif mode == "toward-negative":
        up = (r != 0) & neg
    else:  # stochastic: up with probability r / 2^shift
        p = np.ldexp(r.astype(np.float64), -shift)  # exact: r < 2^53
        up = rng.random(u.shape) < p
    n = (t + up.astype(np.uint64)).astype(np.float64)  # <= 2^53: exact
    with np.errstate(over="ignore"):  # beyond float64's range: inf, then the overflow rule
        return np.ldexp(n, q)


# --------------------------------------------------------------------------- torch
def cast_torch(x, fmt, rounding: str = "nearest-even", generator=None):
    """The same cast for a torch tensor (any device, float16/32/64 or complex); float64 / complex128 out, same
    device. Uses the generic integer algorithm on int64 bit patterns (torch lacks uint64 shifts on every device)."""
    import torch
    fmt = get_format(fmt)
    mode = canonical_rounding(rounding)
    if torch.is_complex(x):
        x = x.to(torch.complex128)
        return torch.complex(_cast_torch_real(x.real.contiguous(), fmt, mode, generator),
                             _cast_torch_real(x.imag.contiguous(), fmt, mode, generator))
    return _cast_torch_real(x.to(torch.float64).contiguous(), fmt, mode, generator)


def _cast_torch_real(x, fmt: FloatFormat, mode: str, generator):
    import torch
    bits = x.view(torch.int64)
    neg = bits < 0
    u = bits & 0x7FFF_FFFF_FFFF_FFFF
    m = fmt.man_bits
    E = u >> 52
    frac = u & ((1 << 52) - 1)
    S = torch.where(E == 0, frac, frac | (1 << 52))
    ex = torch.where(E == 0, torch.full_like(E, -1022), E - 1023)
    if fmt.subnormals:
        q = torch.clamp(ex, min=fmt.emin) - m
    else:
        q = torch.where(E >= fmt.emin + 1023, ex - m, torch.full_like(ex, fmt.emin))
    shift = q - (ex - 52)
    big = shift > 62
    sh = torch.clamp(shift, max=62)
    one = torch.ones_like(S)
    t = torch.where(big, torch.zeros_like(S), S >> sh)
    r = torch.where(big, S, S & ((one << sh) - 1))
    if mode == "nearest-even":
        half = torch.where(shift > 0, one << torch.clamp(sh - 1, min=0), one)
        half = torch.where(big, torch.full_like(S, 1 << 62), half)
        odd = (t & 1) == 1  # parity of the integer significand (see rounding.py)
        up = (r > half) | ((r == half) & odd)
    elif mode == "nearest-away":
        half = torch.where(shift > 0, one << torch.clamp(sh - 1, min=0), one)
        half = torch.where(big, torch.full_like(S, 1 << 62), half)
        up = (r >= half) & (shift > 0)
    elif mode == "to-odd":
        up = (r != 0) & ((t & 1) == 0)
    elif mode == "toward-zero":
        up = torch.zeros_like(neg)
    elif mode == "toward-positive":
        up = (r != 0) & ~neg
    elif mode == "toward-negative":
        up = (r != 0) & neg
    else:
        p = r.to(torch.float64) * ((1023 - torch.clamp(shift, max=1000)) << 52).view(torch.float64) \
            * ((1023 - (shift - torch.clamp(shift, max=1000))) << 52).view(torch.float64)
        up = torch.rand(x.shape, dtype=torch.float64, device=x.device, generator=generator) < p
    n = (t + up.to(torch.int64)).to(torch.float64)          # <= 2^53: exact
    # n * 2^q with powers of two built from their bit patterns (exact; torch.ldexp is a pow-and-multiply that is
    # not exact on every device): two factors keep each in float64's normal range
    q1 = torch.clamp(q, min=-1000, max=1000)
    q2 = q - q1
    mag = n * ((q1 + 1023) << 52).view(torch.float64) * ((q2 + 1023) << 52).view(torch.float64)
    maxf = fmt.max_finite
    finite = u < 0x7FF0_0000_0000_0000
    over = (mag > maxf) & finite
    away = _overflow_away(mode, neg)
    ov = torch.full_like(mag, overflow_value(fmt))
    mag = torch.where(over, torch.where(away, ov, torch.full_like(mag, maxf)), mag)
    mag = torch.where(u == 0x7FF0_0000_0000_0000, torch.full_like(mag, _inf_value(fmt)), mag)
    mag = torch.where(u > 0x7FF0_0000_0000_0000, torch.full_like(mag, float("nan")), mag)
    res = torch.where(neg, -mag, mag)
    if fmt.special == "fnuz":
        res = torch.where(res == 0, torch.zeros_like(res), res)
    elif fmt.special == "fnu":
        res = torch.where(res == 0, torch.full_like(res, fmt.min_normal), res)
        res = torch.where(neg | (x == 0), torch.full_like(res, float("nan")), res)
    return res


# --------------------------------------------------------------------------- exact reference
def _floor_log2(a: Fraction) -> int:
    """floor(log2 a) for a > 0, exactly."""
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    # 2^e <= a < 2^(e+1) ?
    if e >= 0:
        if n < d << e:
            e -= 1
    else:
        if n << -e < d:
            e -= 1
    return e


def _round_fraction(x: Fraction, fmt: FloatFormat, mode: str, u: Fraction | None = None) -> float:
    neg = x < 0
    a = -x if neg else x
    if fmt.special == "fnu" and x <= 0:
        return np.nan
    if a == 0:
        return -0.0 if neg and fmt.signed_zero else 0.0
    e = _floor_log2(a)
    m = fmt.man_bits
    if fmt.subnormals:
        q = max(e, fmt.emin) - m
    else:
        q = e - m if e >= fmt.emin else fmt.emin
    scaled = a / Fraction(2) ** q
    t = scaled.numerator // scaled.denominator
    r = scaled - t
    if mode == "nearest-even":
        # ties go to the neighbour with an even integer significand t on the grid 2^q (see rounding.py)
        odd = t % 2 == 1
        up = r > Fraction(1, 2) or (r == Fraction(1, 2) and odd)
    elif mode == "nearest-away":
        up = r >= Fraction(1, 2)
    elif mode == "to-odd":
        up = r != 0 and t % 2 == 0
    elif mode == "toward-zero":
        up = False
    elif mode == "toward-positive":
        up = r != 0 and not neg
    elif mode == "toward-negative":
        up = r != 0 and neg
    else:
        if u is None:
            raise InputError("the exact stochastic cast needs the uniform draw u")
        up = u < r
    mag = (t + int(up)) * Fraction(2) ** q
    if mag > fmt.max_exact:
        val = overflow_value(fmt) if _away_scalar(mode, neg) else fmt.max_finite
    elif mag == 0 and not fmt.has_zero:
        val = fmt.min_normal
    else:
        val = float(mag)  # exact: mag is a value of the format, hence a float64
    if val == 0 and not fmt.signed_zero:
        return 0.0
    return -val if neg else val


def _mpf_to_fraction(v) -> Fraction:
    """The exact value of a finite mpmath mpf. (``mpf.man_exp`` gives the *magnitude's* mantissa: the sign is
    ``_mpf_[0]``; reading man_exp alone turned cos(2*pi*3/7) = -0.90097 into +0.90097.)"""
    import mpmath
    v = mpmath.mpf(v)
    sgn, man, exp, _bc = v._mpf_
    if not man:
        return Fraction(0)
    f = Fraction(man) * Fraction(2) ** exp
    return -f if sgn else f


def cast_exact(value, fmt, rounding: str = "nearest-even", u: Fraction | None = None) -> float:
    """Exact rounding of the exact value of ``value`` into ``fmt`` (a float64 holding the format's value).

    ``value``: int, Fraction, float (its exact binary value), decimal string ("0.1" is exactly 1/10), "p/q",
    "inf"/"-inf"/"nan"/"-0", mpmath mpf (exact dyadic), or a real :class:`lrnnkit.exact.Cyc`. For stochastic
    rounding pass the uniform draw ``u`` in [0, 1) (rounds away from zero iff ``u`` < fractional distance)."""
    fmt = get_format(fmt)
    mode = canonical_rounding(rounding)
    if isinstance(value, str):
        value = parse_exact_value(value)
    if isinstance(value, float):
        if np.isnan(value):
            return np.nan
        if fmt.special == "fnu" and (value <= 0 or np.signbit(value)):
            return np.nan
        if np.isinf(value):
            iv = _inf_value(fmt)
            return -iv if value < 0 else iv
        if value == 0:
            return value if fmt.signed_zero else 0.0  # keeps the sign of zero where -0 exists
        value = Fraction(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = Fraction(int(value))
    if isinstance(value, Fraction):
        return _round_fraction(value, fmt, mode, u)
    if isinstance(value, Cyc):
        return _cast_cyc(value, fmt, mode, u)
    if type(value).__module__.startswith("sympy"):
        return _cast_sympy(value, fmt, mode, u)
    try:
        import mpmath
        if isinstance(value, mpmath.mpf):
            if not mpmath.isfinite(value):
                return cast_exact(float(value), fmt, rounding)
            return _round_fraction(_mpf_to_fraction(value), fmt, mode, u)
    except ImportError:  # pragma: no cover
        pass
    raise InputError(f"cannot cast {value!r}: not an exact real number")


def _cast_cyc(x, fmt: FloatFormat, mode: str, u) -> float:
    import mpmath
    bound = float(sum(abs(c) for c in x.c)) + 1.0
    dps = 40
    while dps <= 5000:
        z = x.to_mpc(dps)
        with mpmath.workdps(dps):
            if abs(z.imag) > mpmath.mpf(bound) * mpmath.mpf(10) ** (-(dps - 10)):
                raise InputError(f"cannot cast the non-real number {x!r}")
            err = mpmath.mpf(bound) * mpmath.mpf(10) ** (-(dps - 10))
            lo = _mpf_to_fraction(z.real - err)
            hi = _mpf_to_fraction(z.real + err)
        rl, rh = _round_fraction(lo, fmt, mode, u), _round_fraction(hi, fmt, mode, u)
        if (rl == rh and np.signbit(rl) == np.signbit(rh)) or (np.isnan(rl) and np.isnan(rh)):
            return rl
        dps *= 2
    raise ArithmeticError(f"could not decide the rounding of {x!r}")


def _cast_sympy(x, fmt: FloatFormat, mode: str, u) -> float:
    """A real sympy expression: bracketed by evaluations at increasing precision until both ends round alike."""
    import sympy
    digits = 30
    while digits <= 2000:
        br = exact_bracket(x, digits)
        if br is not None:
            rl, rh = _round_fraction(br[0], fmt, mode, u), _round_fraction(br[1], fmt, mode, u)
            if (rl == rh and np.signbit(rl) == np.signbit(rh)) or (np.isnan(rl) and np.isnan(rh)):
                return rl
        digits *= 2
    simple = sympy.nsimplify(sympy.simplify(x))
    if simple.is_Rational:
        return _round_fraction(Fraction(int(simple.p), int(simple.q)), fmt, mode, u)
    raise InputError(f"cannot decide the rounding of {x}: it lies on (or within 10^-2000 of) a rounding boundary; "
                     "give it as a fraction")


_TRIG = re.compile(r"^(-)?(cos|sin)\(\s*2\s*\*?\s*pi\s*(?:\*\s*(\d+)\s*)?/\s*(\d+)\s*\)$")


def parse_exact_value(s: str):
    """Parse a value for the exact cast: decimal ("0.1", "1e-3"), "p/q", "inf", "-inf", "nan", "-0" (returned as
    floats), "cos(2*pi*k/m)" / "sin(2*pi/m)" (exact cyclotomic), or a symbolic expression ("1/sqrt(2)", "2**-3",
    "pi/4": :mod:`lrnnkit.precision.expr`, a Fraction when it is rational, else a sympy expression). Never uses
    eval."""
    check_number_text(s, "value")
    t = s.strip().lower().replace(" ", "")
    if t in ("inf", "+inf", "infinity", "+infinity"):
        return np.inf
    if t in ("-inf", "-infinity"):
        return -np.inf
    if t in ("nan", "+nan", "-nan"):
        return np.nan
    mt = _TRIG.match(t)
    if mt:
        k = int(mt.group(3) or 1)
        mm = int(mt.group(4))
        if mm == 0:
            raise InputError(f"bad value {s!r}: division by zero")
        if mm * (4 if mt.group(2) == "sin" else 1) > limits.MAX_CYCLOTOMIC_ORDER:
            raise SizeLimitError(f"value {s!r}: the exact value lives in Q(zeta_N) with N = "
                                 f"{mm * (4 if mt.group(2) == 'sin' else 1)}; at most N = {limits.MAX_CYCLOTOMIC_ORDER} "
                                 "(lrnnkit.limits.MAX_CYCLOTOMIC_ORDER)")
        v = cos2pi(k, mm) if mt.group(2) == "cos" else sin2pi(k, mm)
        return -v if mt.group(1) else v
    try:
        f = Fraction(t)
    except ZeroDivisionError:
        raise InputError(f"bad value {s!r}: division by zero") from None
    except ValueError:
        v = parse_expression(t)
        if v.is_Rational:
            f = Fraction(int(v.p), int(v.q))
            return -0.0 if f == 0 and t.startswith("-") else f
        return v
    if f == 0 and t.startswith("-"):
        return -0.0
    return f


def exact_decimal(v: float) -> str:
    """The exact decimal expansion of a float64 (every binary float has a finite one): "0.099609375", "-0",
    "inf", "nan"."""
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0" if np.signbit(v) else "0"
    return format(Decimal(v), "f")


# --------------------------------------------------------------------------- scalar (pure Python) cast
def scalar_caster(fmt, rounding: str = "nearest-even"):
    """A pure-Python ``float -> float`` cast for one value (deterministic modes), the same function as :func:`cast`:
    ``x = y 2^q`` with ``q`` the quantum exponent (``ldexp`` by a power of two is exact here: ``|y| < 2^53`` and
    scaling up never underflows), ``y`` rounded to an integer by ``round`` (ties to even), ``trunc``, ``ceil``,
    ``floor``, ties away or to odd (from ``trunc(y)`` and the exact ``y - trunc(y)``). The fast path of the memoized
    simulator, where numpy's per-call overhead on 2-to-8-element arrays dominates."""
    import math
    fmt = get_format(fmt)
    mode = canonical_rounding(rounding)
    if mode == "stochastic":
        raise InputError("the scalar cast supports the deterministic rounding modes only")
    emin, man = fmt.emin, fmt.man_bits
    maxf = fmt.max_finite
    ovf = overflow_value(fmt)
    infv = _inf_value(fmt)
    sub = fmt.subnormals
    copysign = math.copysign

    def ties_away(y: float) -> int:
        n = math.trunc(y)
        f = abs(y - n)          # exact: y - trunc(y) is a float64
        return n + (1 if y > 0 else -1) if f >= 0.5 else n

    def to_odd(y: float) -> int:
        n = math.trunc(y)
        return n + (1 if y > 0 else -1) if y != n and n % 2 == 0 else n

    rnd = {"nearest-even": round, "toward-zero": math.trunc, "toward-positive": math.ceil,
           "toward-negative": math.floor, "nearest-away": ties_away, "to-odd": to_odd}[mode]
    away_pos = _away_scalar(mode, False)
    away_neg = _away_scalar(mode, True)
    inf = math.inf
    special = fmt.special
    if special in ("fnuz", "fnu"):
        signed = _scalar_core(fmt, emin, man, maxf, ovf, infv, sub, rnd, away_pos, away_neg)
        minn = fmt.min_normal

        def c_unsigned(x: float) -> float:
            if special == "fnu" and (x <= 0.0 or copysign(1.0, x) < 0) and x == x:
                return math.nan
            r = signed(x)
            if r == 0.0:
                return minn if special == "fnu" else 0.0
            return r
        return c_unsigned
    return _scalar_core(fmt, emin, man, maxf, ovf, infv, sub, rnd, away_pos, away_neg)


def _scalar_core(fmt, emin, man, maxf, ovf, infv, sub, rnd, away_pos, away_neg):
    import math
    frexp, ldexp, copysign = math.frexp, math.ldexp, math.copysign
    inf = math.inf

    def c(x: float) -> float:
        if x != x:
            return x
        if x == inf:
            return infv
        if x == -inf:
            return -infv
        if x == 0.0:
            return x
        e = frexp(x)[1] - 1
        if e >= emin:
            q = e - man
        else:
            q = emin - man if sub else emin
        y = ldexp(x, -q)
        n = rnd(y)
        try:
            r = ldexp(n, q)
        except OverflowError:  # beyond float64's range: certainly an overflow of the format
            r = inf if n > 0 else -inf
        if r > maxf:
            return ovf if away_pos else maxf
        if r < -maxf:
            return -ovf if away_neg else -maxf
        if r == 0.0:
            return copysign(0.0, x)
        return r
    return c
