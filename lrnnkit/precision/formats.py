"""Binary floating-point formats ``(exponent bits, mantissa bits)`` with the switches that distinguish real formats.

A format with ``e`` exponent bits and ``m`` (explicitly stored) mantissa bits has bias ``b = 2^(e-1) - 1`` and
precision ``p = m + 1``. Its finite values are ``0``, the subnormals ``k 2^(emin - m)`` (``0 < k < 2^m``, when
``subnormals``) and the normals ``(1 + f 2^-m) 2^E`` for ``emin <= E <= emax``, with ``emin = 1 - b``. The largest
exponent and the special values depend on how the all-ones exponent field is used (``special``):

* ``"ieee"``: IEEE 754 style; the all-ones exponent encodes inf and NaN, so ``emax = 2^e - 2 - b``
  (fp64, fp32, tf32, bf16, fp16, fp8-e5m2, and the IEEE-like fp8-e4m3 of ml_dtypes, max 240);
* ``"fn"``: finite with NaN (OCP "fn"): no inf; only the all-ones exponent *and* all-ones mantissa pattern is NaN,
  the rest of that binade is normal: ``emax = 2^e - 1 - b`` and ``max = (2 - 2^(1-m)) 2^emax``
  (fp8-e4m3fn: max 448);
* ``"none"``: no inf and no NaN, every pattern is a number (OCP MX fp4-e2m1: max 6); ``emax = 2^e - 1 - b``.

Overflow (a rounded magnitude above ``max``) gives: inf for ``"ieee"`` (or ``max`` where the rounding direction
points toward zero, as IEEE 754 section 7.4 says), NaN for ``"fn"`` (what ml_dtypes does), ``max`` for ``"none"``.
``saturate=True`` makes every overflow give ``±max`` (the OCP "saturating" conversion).

``subnormals=False`` removes the subnormals from the value set: values are then rounded to ``{0} ∪ normals``
(so under round-to-nearest everything below ``min_normal / 2`` becomes a signed zero).

Names: presets ``fp64 fp32 tf32 bf16 fp16 fp8-e4m3 fp8-e4m3fn fp8-e5m2 fp4-e2m1`` (and the aliases listed in
``PRESETS``), or a custom ``eXmY`` with optional suffixes: ``fn`` (special = "fn"), ``-nonan`` (special = "none"),
``-sat`` (saturate), ``-ftz`` (no subnormals); e.g. ``e5m7``, ``e4m3fn``, ``e3m4-sat-ftz``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction

import numpy as np

from ..errors import InputError

__all__ = ["FloatFormat", "PRESETS", "get_format", "format_names"]

_SPECIALS = ("ieee", "fn", "none")


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format; see the module docstring for the value set and the special values."""
    exp_bits: int
    man_bits: int
    subnormals: bool = True
    special: str = "ieee"
    saturate: bool = False
    name: str = ""

    def __post_init__(self):
        e, m = self.exp_bits, self.man_bits
        if not isinstance(e, int) or not isinstance(m, int) or isinstance(e, bool) or isinstance(m, bool):
            raise InputError(f"format bits must be integers, got exp_bits={e!r}, man_bits={m!r}")
        if not 2 <= e <= 11:
            raise InputError(f"format {self.label}: exponent bits must lie in 2..11 (values are stored in float64), got {e}")
        if not 0 <= m <= 52:
            raise InputError(f"format {self.label}: mantissa bits must lie in 0..52, got {m}")
        if self.special not in _SPECIALS:
            raise InputError(f"format {self.label}: special must be one of {_SPECIALS}, got {self.special!r}")
        if self.special == "fn" and m == 0:
            raise InputError(f"format {self.label}: an 'fn' format needs at least one mantissa bit")
        if e == 11 and self.special != "ieee":
            raise InputError(f"format {self.label}: 11 exponent bits only with IEEE specials (float64's range)")
        if e == 11 and not self.subnormals and m == 52:
            pass

    # ------------------------------------------------------------------ parameters
    @property
    def label(self) -> str:
        if self.name:
            return self.name
        s = f"e{self.exp_bits}m{self.man_bits}" + ("fn" if self.special == "fn" else "")
        s += "-nonan" if self.special == "none" else ""
        s += "-sat" if self.saturate else ""
        s += "-ftz" if not self.subnormals else ""
        return s

    @property
    def bias(self) -> int:
        return 2 ** (self.exp_bits - 1) - 1

    @property
    def precision(self) -> int:
        return self.man_bits + 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        top = 2 ** self.exp_bits - 1 - self.bias
        return top - 1 if self.special == "ieee" else top

    @property
    def has_inf(self) -> bool:
        return self.special == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.special != "none"

    @cached_property
    def max_exact(self) -> Fraction:
        m = self.man_bits
        frac = Fraction(2) - Fraction(2, 2 ** m) if self.special == "fn" else Fraction(2) - Fraction(1, 2 ** m)
        return frac * Fraction(2) ** self.emax

    @cached_property
    def max_finite(self) -> float:
        return float(self.max_exact)

    @cached_property
    def min_normal(self) -> float:
        return float(Fraction(2) ** self.emin)

    @cached_property
    def min_subnormal(self) -> float:
        """The smallest positive value (the smallest normal when the format has no subnormals)."""
        if not self.subnormals:
            return self.min_normal
        return float(Fraction(2) ** (self.emin - self.man_bits))

    @cached_property
    def epsilon(self) -> float:
        """The gap between 1 and the next larger value, 2^-m."""
        return float(Fraction(1, 2 ** self.man_bits))

    @property
    def unit_roundoff(self) -> float:
        return self.epsilon / 2

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    def describe(self) -> dict:
        return {"name": self.label, "exp_bits": self.exp_bits, "man_bits": self.man_bits, "bits": self.bits,
                "subnormals": self.subnormals, "special": self.special, "saturate": self.saturate,
                "max": repr(self.max_finite), "min_normal": repr(self.min_normal),
                "min_subnormal": repr(self.min_subnormal), "epsilon": repr(self.epsilon)}

    # ------------------------------------------------------------------ enumeration
    def decode_bits(self, codes: np.ndarray) -> np.ndarray:
        """Values (float64) of the bit patterns ``codes`` (sign | exponent | mantissa, ``bits`` wide)."""
        codes = np.asarray(codes, dtype=np.int64)
        e, m = self.exp_bits, self.man_bits
        sign = (codes >> (e + m)) & 1
        E = (codes >> m) & ((1 << e) - 1)
        M = codes & ((1 << m) - 1)
        mag = np.where(E == 0,
                       np.ldexp(M.astype(np.float64), self.emin - m) if self.subnormals else 0.0,
                       np.ldexp((M + (1 << m)).astype(np.float64), E - self.bias - m))
        allones = (1 << e) - 1
        if self.special == "ieee":
            mag = np.where(E == allones, np.where(M == 0, np.inf, np.nan), mag)
        elif self.special == "fn":
            mag = np.where((E == allones) & (M == (1 << m) - 1), np.nan, mag)
        return np.where(sign == 1, -mag, mag)

    def all_values(self, finite_only: bool = True, limit_bits: int = 16) -> np.ndarray:
        """Every value of the format, sorted (each value once; -0 and +0 both kept), for formats of at most
        ``limit_bits`` bits. Without subnormals the subnormal patterns are skipped."""
        if self.bits > limit_bits:
            raise InputError(f"format {self.label} has {self.bits} bits: too many values to enumerate (limit {limit_bits} bits)")
        codes = np.arange(1 << self.bits, dtype=np.int64)
        if not self.subnormals:
            E = (codes >> self.man_bits) & ((1 << self.exp_bits) - 1)
            M = codes & ((1 << self.man_bits) - 1)
            codes = codes[~((E == 0) & (M != 0))]
        v = self.decode_bits(codes)
        if finite_only:
            v = v[np.isfinite(v)]
        # sort with -0 before +0
        order = np.lexsort((~np.signbit(v), v))
        return v[order]


PRESETS: dict[str, FloatFormat] = {}


def _preset(names, fmt):
    for n in names:
        PRESETS[n] = fmt


_preset(["fp64", "float64", "double"], FloatFormat(11, 52, name="fp64"))
_preset(["fp32", "float32", "single"], FloatFormat(8, 23, name="fp32"))
_preset(["tf32"], FloatFormat(8, 10, name="tf32"))
_preset(["bf16", "bfloat16"], FloatFormat(8, 7, name="bf16"))
_preset(["fp16", "float16", "half"], FloatFormat(5, 10, name="fp16"))
_preset(["fp8-e4m3", "float8_e4m3"], FloatFormat(4, 3, name="fp8-e4m3"))
_preset(["fp8-e4m3fn", "float8_e4m3fn"], FloatFormat(4, 3, special="fn", name="fp8-e4m3fn"))
_preset(["fp8-e5m2", "float8_e5m2"], FloatFormat(5, 2, name="fp8-e5m2"))
_preset(["fp4-e2m1", "float4_e2m1fn", "fp4"], FloatFormat(2, 1, special="none", name="fp4-e2m1"))

_CUSTOM = re.compile(r"^e(\d+)m(\d+)(fn)?((?:-(?:sat|ftz|nonan))*)$")


def format_names() -> list[str]:
    return ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8-e4m3", "fp8-e4m3fn", "fp8-e5m2", "fp4-e2m1"]


def get_format(spec) -> FloatFormat:
    """A :class:`FloatFormat` from a preset name, a custom ``eXmY[fn][-sat][-ftz][-nonan]`` name, or a format."""
    if isinstance(spec, FloatFormat):
        return spec
    if not isinstance(spec, str):
        raise InputError(f"not a number format: {spec!r}")
    key = spec.strip().lower()
    if key in PRESETS:
        return PRESETS[key]
    mt = _CUSTOM.match(key)
    if not mt:
        raise InputError(f"unknown number format {spec!r}: use one of {', '.join(format_names())} "
                         f"or a custom eXmY (e.g. e5m7, e4m3fn, e3m4-sat-ftz)")
    e, m = int(mt.group(1)), int(mt.group(2))
    mods = set(x for x in mt.group(4).split("-") if x)
    special = "fn" if mt.group(3) else "ieee"
    if "nonan" in mods:
        if mt.group(3):
            raise InputError(f"format {spec!r}: 'fn' and '-nonan' contradict each other")
        special = "none"
    return FloatFormat(e, m, subnormals="ftz" not in mods, special=special, saturate="sat" in mods)
