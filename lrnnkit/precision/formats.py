"""Binary floating-point formats ``(exponent bits, mantissa bits)`` with the switches that distinguish real formats.

A format with ``e`` exponent bits and ``m`` (explicitly stored) mantissa bits has an exponent bias ``b`` (by default
``2^(e-1) - 1``) and precision ``p = m + 1``. Its finite values are ``0``, the subnormals ``k 2^(emin - m)``
(``0 < k < 2^m``, when ``subnormals``) and the normals ``(1 + f 2^-m) 2^E`` for ``emin <= E <= emax``, with
``emin = 1 - b``. The largest exponent and the special values depend on how the codes are used (``special``):

* ``"ieee"``: IEEE 754 style; the all-ones exponent encodes inf and NaN, so ``emax = 2^e - 2 - b``
  (fp64, fp32, tf32, bf16, fp16; ml_dtypes' ``float8_e5m2`` = OCP E5M2, ``float8_e4m3`` (IEEE-like, max 240) and
  ``float8_e3m4``);
* ``"fn"``: finite, one NaN: no inf; only the all-ones exponent *and* all-ones mantissa pattern is NaN, the rest of
  that binade is normal: ``emax = 2^e - 1 - b`` and ``max = (2 - 2^(1-m)) 2^emax`` (ml_dtypes' ``float8_e4m3fn`` =
  OCP E4M3, max 448);
* ``"none"``: no inf and no NaN, every code is a number; ``emax = 2^e - 1 - b`` (ml_dtypes' ``float6_e2m3fn``,
  ``float6_e3m2fn``, ``float4_e2m1fn`` = the OCP MX FP6 / FP4 element formats, max 7.5, 28, 6);
* ``"fnuz"``: finite, unsigned zero: no inf, no -0; the code of -0 (sign bit alone) is the only NaN, every other
  code is a number: ``emax = 2^e - 1 - b``, and the default bias is ``2^(e-1)`` (ml_dtypes' ``float8_e4m3fnuz``,
  ``float8_e5m2fnuz``; ``float8_e4m3b11fnuz`` has bias 11). A result that rounds to zero is +0;
* ``"fnu"``: finite, unsigned, exponent only (``m = 0``, no zero, no sign bit): the codes ``0 .. 2^e - 2`` are the
  powers ``2^(k - b)`` and the all-ones code is NaN (ml_dtypes' ``float8_e8m0fnu`` = the OCP MX scale E8M0,
  ``2^-127 .. 2^127``). Zero, negative values, inf and NaN give NaN; positive values below ``2^emin`` give
  ``2^emin`` under every rounding mode (there is no smaller value).

Overflow (a rounded magnitude above ``max``) gives, for rounding modes that point away from zero: inf for
``"ieee"``, NaN for ``"fn"``, ``"fnuz"`` and ``"fnu"``, ``max`` for ``"none"`` (exactly what ml_dtypes does); for
the others (IEEE 754 section 7.4: toward zero, the directed mode toward the other side, round-to-odd) ``max``.
An infinite input gives inf / NaN / ``±max`` the same way. ``saturate=True`` makes every overflow and infinite input
give ``±max`` (the OCP "saturating" conversion; torch's ``float8_e4m3fn`` conversion is ``e4m3fn-sat``).
A NaN input stays NaN, also for ``"none"`` formats, which cannot hold it (ml_dtypes gives -0 for +NaN and +0 for
-NaN there; lrnnkit keeps the undefined value visible instead).

``subnormals=False`` removes the subnormals from the value set: values are then rounded to ``{0} ∪ normals``
(so under round-to-nearest everything below ``min_normal / 2`` becomes a signed zero).

Names (:func:`get_format`; case, ``_`` and ``-`` do not matter):

* presets ``fp64 fp32 tf32 bf16 fp16`` and their numpy names;
* every ml_dtypes name, with ml_dtypes' definition: ``float8_e4m3fn float8_e5m2 float8_e4m3 float8_e3m4
  float8_e4m3fnuz float8_e5m2fnuz float8_e4m3b11fnuz float8_e8m0fnu float6_e2m3fn float6_e3m2fn float4_e2m1fn``
  (the same without the ``floatN_`` prefix, or with ``fpN-``: ``fp8-e4m3fn``, ``e2m1fn``, ``fp4-e2m1fn``);
* OCP names ``fpN-eXmY``: the OCP (and MX element) format of that name: ``fp8-e5m2``, ``fp6-e2m3``, ``fp6-e3m2``,
  ``fp4-e2m1``, ``fp8-e8m0``; ``mxfp8-e4m3 mxfp8-e5m2 mxfp6-e2m3 mxfp6-e3m2 mxfp4`` (element formats only, without
  the block scale). ``fp8-e4m3`` is refused: OCP's E4M3 is ``fp8-e4m3fn`` (max 448) while ml_dtypes'
  ``float8_e4m3`` is the IEEE-like ``fp8-e4m3-ieee`` (max 240);
* custom ``eXmY`` (IEEE-like specials, e.g. ``e5m7``) with an optional bias ``bB`` and suffix ``fn`` (one NaN, no inf,
  where ml_dtypes defines no such name; ``-noinf`` says the same for any name), ``fnuz``, ``fnu``, and the modifiers
  ``-ieee`` (IEEE-like specials, explicitly), ``-nonan`` (special = "none"), ``-sat`` (saturate), ``-ftz`` (no
  subnormals); e.g. ``e5m7``, ``e3m4-sat-ftz``, ``e4m3fn-sat``, ``e5m2b15fnuz``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction

import numpy as np

from ..errors import InputError

__all__ = ["FloatFormat", "PRESETS", "ML_DTYPES_NAMES", "get_format", "format_names"]

_SPECIALS = ("ieee", "fn", "none", "fnuz", "fnu")


def _default_bias(e: int, special: str) -> int:
    return 2 ** (e - 1) if special == "fnuz" else 2 ** (e - 1) - 1


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format; see the module docstring for the value set and the special values.
    ``exp_bias`` None means the default bias of ``special``."""
    exp_bits: int
    man_bits: int
    subnormals: bool = True
    special: str = "ieee"
    saturate: bool = False
    name: str = ""
    exp_bias: int | None = None

    def __post_init__(self):
        e, m = self.exp_bits, self.man_bits
        if not isinstance(e, int) or not isinstance(m, int) or isinstance(e, bool) or isinstance(m, bool):
            raise InputError(f"format bits must be integers, got exp_bits={e!r}, man_bits={m!r}")
        if self.special not in _SPECIALS:
            raise InputError(f"format e{e}m{m}: special must be one of {_SPECIALS}, got {self.special!r}")
        if not 2 <= e <= 11 and not (e == 1 and self.special == "fnu"):
            raise InputError(f"format {self.label}: exponent bits must lie in 2..11 (values are stored in float64), got {e}")
        if not 0 <= m <= 52:
            raise InputError(f"format {self.label}: mantissa bits must lie in 0..52, got {m}")
        if self.special == "fn" and m == 0:
            raise InputError(f"format {self.label}: an 'fn' format needs at least one mantissa bit")
        if self.special == "fnu" and (m != 0 or self.subnormals):
            raise InputError(f"format e{e}m{m}: an 'fnu' format has no mantissa bits and no subnormals (eXm0fnu)")
        b = self.bias
        if e == 11 and (self.special != "ieee" or b != 1023):
            raise InputError(f"format {self.label}: 11 exponent bits only with IEEE specials and bias 1023 "
                             "(float64's range)")
        if self.exp_bias is not None and (isinstance(self.exp_bias, bool) or not isinstance(self.exp_bias, int)
                                          or not 0 <= self.exp_bias <= 2 ** e):
            raise InputError(f"format e{e}m{m}: bias must be an integer in 0..2^{e}, got {self.exp_bias!r}")
        if self.emax > 1023 or self.emin - m < -1074:
            raise InputError(f"format {self.label}: its range exceeds float64's "
                             f"(exponents {self.emin - m}..{self.emax})")

    # ------------------------------------------------------------------ parameters
    @property
    def label(self) -> str:
        if self.name:
            return self.name
        e, m, sp = self.exp_bits, self.man_bits, self.special
        core = _ML_CORE_OF.get((e, m, sp, self.bias))
        if core is None:
            s = f"e{e}m{m}"
            if self.exp_bias is not None and self.exp_bias != _default_bias(e, sp):
                s += f"b{self.exp_bias}"
            s += {"ieee": "", "fn": "fn" if f"e{e}m{m}fn" not in _ML_CORES else "-noinf", "none": "-nonan",
                  "fnuz": "fnuz", "fnu": "fnu"}[sp]
        else:
            s = core
        s += "-sat" if self.saturate else ""
        s += "-ftz" if not self.subnormals and sp != "fnu" else ""
        return s

    @property
    def bias(self) -> int:
        return _default_bias(self.exp_bits, self.special) if self.exp_bias is None else self.exp_bias

    @property
    def precision(self) -> int:
        return self.man_bits + 1

    @property
    def emin(self) -> int:
        """The smallest normal exponent (``-bias`` for "fnu", whose exponent code 0 is a normal value)."""
        return -self.bias if self.special == "fnu" else 1 - self.bias

    @property
    def emax(self) -> int:
        top = 2 ** self.exp_bits - 1 - self.bias
        return top - 1 if self.special in ("ieee", "fnu") else top

    @property
    def has_inf(self) -> bool:
        return self.special == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.special != "none"

    @property
    def signed_zero(self) -> bool:
        """Whether -0 is a value (not for "fnuz", whose -0 code is NaN, nor for "fnu", which has no zero)."""
        return self.special in ("ieee", "fn", "none")

    @property
    def has_zero(self) -> bool:
        return self.special != "fnu"

    @property
    def ml_dtypes_name(self) -> str | None:
        """The name of the ml_dtypes dtype with exactly this definition (and this default conversion), if any."""
        if self.saturate or (not self.subnormals and self.special != "fnu"):
            return None
        if (self.exp_bits, self.man_bits, self.special, self.bias) == (8, 7, "ieee", 127):
            return "bfloat16"
        core = _ML_CORE_OF.get((self.exp_bits, self.man_bits, self.special, self.bias))
        return None if core is None else _ML_CORES[core][1]

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
        return self.exp_bits + self.man_bits + (0 if self.special == "fnu" else 1)

    def describe(self) -> dict:
        return {"name": self.label, "exp_bits": self.exp_bits, "man_bits": self.man_bits, "bits": self.bits,
                "bias": self.bias, "subnormals": self.subnormals, "special": self.special,
                "saturate": self.saturate, "ml_dtypes": self.ml_dtypes_name,
                "max": repr(self.max_finite), "min_normal": repr(self.min_normal),
                "min_subnormal": repr(self.min_subnormal), "epsilon": repr(self.epsilon)}

    # ------------------------------------------------------------------ codes
    def decode_bits(self, codes: np.ndarray) -> np.ndarray:
        """Values (float64) of the bit patterns ``codes`` (sign | exponent | mantissa, ``bits`` wide)."""
        codes = np.asarray(codes, dtype=np.int64)
        e, m = self.exp_bits, self.man_bits
        allones = (1 << e) - 1
        if self.special == "fnu":
            return np.where(codes == allones, np.nan, np.ldexp(1.0, (codes & allones) - self.bias))
        sign = (codes >> (e + m)) & 1
        E = (codes >> m) & allones
        M = codes & ((1 << m) - 1)
        mag = np.where(E == 0,
                       np.ldexp(M.astype(np.float64), self.emin - m) if self.subnormals else 0.0,
                       np.ldexp((M + (1 << m)).astype(np.float64), E - self.bias - m))
        if self.special == "ieee":
            mag = np.where(E == allones, np.where(M == 0, np.inf, np.nan), mag)
        elif self.special == "fn":
            mag = np.where((E == allones) & (M == (1 << m) - 1), np.nan, mag)
        elif self.special == "fnuz":
            mag = np.where((sign == 1) & (E == 0) & (M == 0), np.nan, mag)
        return np.where(sign == 1, -mag, mag)

    def encode(self, values) -> np.ndarray:
        """The codes (int64, ``bits`` wide) of ``values``, which must be values of the format (e.g. results of
        :func:`lrnnkit.precision.cast.cast`): the inverse of :meth:`decode_bits`. NaN gets the format's NaN code with
        the NaN's sign bit (ml_dtypes' choice; "ieee": the quiet NaN ``0 11..1 10..0``); formats without NaN refuse
        it."""
        v = np.asarray(values, dtype=np.float64)
        e, m = self.exp_bits, self.man_bits
        allones = (1 << e) - 1
        nan = np.isnan(v)
        if nan.any() and not self.has_nan:
            raise InputError(f"format {self.label} has no NaN: cannot encode NaN")
        neg = np.signbit(v) & ~nan
        a = np.abs(np.where(nan, 1.0, v))
        inf = np.isinf(a)
        if inf.any() and not self.has_inf:
            raise InputError(f"format {self.label} has no infinity: cannot encode inf")
        a = np.where(inf, 1.0, a)
        _, ex = np.frexp(a)
        E = ex.astype(np.int64) - 1
        normal = (E >= self.emin) & (a > 0)
        Ef = np.where(normal, E + self.bias, 0)
        Mf = np.where(normal, np.ldexp(a, -np.where(normal, E, 0) + m) - (1 << m), np.ldexp(a, m - self.emin))
        if self.special == "fnu":
            codes = np.where(nan, allones, Ef)
        else:
            codes = (Ef << m) | Mf.astype(np.int64)
            if self.special == "ieee":
                codes = np.where(inf, allones << m, codes)
                codes = np.where(nan, (allones << m) | (1 << max(m - 1, 0)) if m else allones << m, codes)
            elif self.special == "fn":
                codes = np.where(nan, (allones << m) | ((1 << m) - 1), codes)
            if self.special == "fnuz":
                codes = np.where(nan, 1 << (e + m), codes)
                neg = neg & (a > 0)
            nsign = np.signbit(v) & nan if self.special in ("ieee", "fn") else False
            codes = codes | (np.where(neg | nsign, 1, 0) << (e + m))
        back = self.decode_bits(codes)
        ok = (back.view(np.uint64) == np.where(nan, back, v).view(np.uint64)) | (nan & np.isnan(back))
        if self.special == "fnuz":
            ok |= (v == 0) & (back == 0)
        if not ok.all():
            bad = v[~ok][0]
            raise InputError(f"{bad!r} is not a value of format {self.label}")
        return codes

    def all_values(self, finite_only: bool = True, limit_bits: int = 16) -> np.ndarray:
        """Every value of the format, sorted (each value once; -0 and +0 both kept where -0 exists), for formats of
        at most ``limit_bits`` bits. Without subnormals the subnormal patterns are skipped."""
        if self.bits > limit_bits:
            raise InputError(f"format {self.label} has {self.bits} bits: too many values to enumerate (limit {limit_bits} bits)")
        codes = np.arange(1 << self.bits, dtype=np.int64)
        if not self.subnormals and self.special != "fnu":
            E = (codes >> self.man_bits) & ((1 << self.exp_bits) - 1)
            M = codes & ((1 << self.man_bits) - 1)
            codes = codes[~((E == 0) & (M != 0))]
        v = self.decode_bits(codes)
        if finite_only:
            v = v[np.isfinite(v)]
        # sort with -0 before +0
        order = np.lexsort((~np.signbit(v), v))
        return v[order]


# ml_dtypes' floating-point dtypes below 16 bits: core name -> (FloatFormat fields, ml_dtypes name, OCP name)
_ML_CORES: dict[str, tuple[tuple, str, str]] = {
    "e4m3fn": ((4, 3, "fn", 7), "float8_e4m3fn", "OCP FP8 E4M3 / MX FP8 E4M3"),
    "e5m2": ((5, 2, "ieee", 15), "float8_e5m2", "OCP FP8 E5M2 / MX FP8 E5M2"),
    "e4m3": ((4, 3, "ieee", 7), "float8_e4m3", "IEEE-like E4M3 (not OCP's E4M3)"),
    "e3m4": ((3, 4, "ieee", 3), "float8_e3m4", "IEEE-like E3M4"),
    "e4m3fnuz": ((4, 3, "fnuz", 8), "float8_e4m3fnuz", "Graphcore / AMD FP8 E4M3"),
    "e5m2fnuz": ((5, 2, "fnuz", 16), "float8_e5m2fnuz", "Graphcore / AMD FP8 E5M2"),
    "e4m3b11fnuz": ((4, 3, "fnuz", 11), "float8_e4m3b11fnuz", "E4M3 with bias 11"),
    "e8m0fnu": ((8, 0, "fnu", 127), "float8_e8m0fnu", "OCP MX scale E8M0"),
    "e2m3fn": ((2, 3, "none", 1), "float6_e2m3fn", "OCP MX FP6 E2M3"),
    "e3m2fn": ((3, 2, "none", 3), "float6_e3m2fn", "OCP MX FP6 E3M2"),
    "e2m1fn": ((2, 1, "none", 1), "float4_e2m1fn", "OCP MX FP4 E2M1"),
}
_ML_CORE_OF = {v[0]: k for k, v in _ML_CORES.items()}
ML_DTYPES_NAMES = {v[1]: k for k, v in _ML_CORES.items()}

# canonical lrnnkit names of the shared formats (the label get_format gives them)
_CANONICAL = {"e4m3fn": "fp8-e4m3fn", "e5m2": "fp8-e5m2", "e4m3": "fp8-e4m3-ieee", "e3m4": "fp8-e3m4",
              "e4m3fnuz": "fp8-e4m3fnuz", "e5m2fnuz": "fp8-e5m2fnuz", "e4m3b11fnuz": "fp8-e4m3b11fnuz",
              "e8m0fnu": "fp8-e8m0fnu", "e2m3fn": "fp6-e2m3fn", "e3m2fn": "fp6-e3m2fn", "e2m1fn": "fp4-e2m1fn"}
# OCP / MX names "fpN-eXmY" without a suffix -> the core they denote (fp8-e4m3 is refused: see get_format)
_OCP = {"fp8-e5m2": "e5m2", "fp8-e3m4": "e3m4", "fp6-e2m3": "e2m3fn", "fp6-e3m2": "e3m2fn", "fp4-e2m1": "e2m1fn",
        "fp8-e8m0": "e8m0fnu", "fp4": "e2m1fn", "mxfp8-e4m3": "e4m3fn", "mxfp8-e5m2": "e5m2",
        "mxfp6-e2m3": "e2m3fn", "mxfp6-e3m2": "e3m2fn", "mxfp4": "e2m1fn", "mxfp4-e2m1": "e2m1fn"}

PRESETS: dict[str, FloatFormat] = {}


def _preset(names, fmt):
    for n in names:
        PRESETS[n] = fmt


_preset(["fp64", "float64", "double"], FloatFormat(11, 52, name="fp64"))
_preset(["fp32", "float32", "single"], FloatFormat(8, 23, name="fp32"))
_preset(["tf32"], FloatFormat(8, 10, name="tf32"))
_preset(["bf16", "bfloat16"], FloatFormat(8, 7, name="bf16"))
_preset(["fp16", "float16", "half"], FloatFormat(5, 10, name="fp16"))

_AMBIGUOUS = {"fp8-e4m3": "format 'fp8-e4m3' is ambiguous: use fp8-e4m3fn (OCP E4M3, what GPUs call FP8 E4M3: no inf, "
                          "max 448; ml_dtypes float8_e4m3fn) or fp8-e4m3-ieee (IEEE-like with inf, max 240; "
                          "ml_dtypes float8_e4m3; what lrnnkit's fp8-e4m3 used to mean)"}

_NAME = re.compile(r"^(?:(fp|float|mxfp)(\d+)-)?e(\d+)m(\d+)(?:b(\d+))?(fnuz|fnu|fn)?"
                   r"((?:-(?:sat|ftz|nonan|noinf|ieee))*)$")


def format_names() -> list[str]:
    """The canonical names of the named formats (custom eXmY names come on top)."""
    return ["fp64", "fp32", "tf32", "bf16", "fp16"] + list(_CANONICAL.values())


def get_format(spec) -> FloatFormat:
    """A :class:`FloatFormat` from a name (see the module docstring: presets, ml_dtypes names, OCP names, custom
    ``eXmY[bB][fn|fnuz|fnu][-ieee|-noinf|-nonan][-sat][-ftz]``), or a format."""
    if isinstance(spec, FloatFormat):
        return spec
    if not isinstance(spec, str):
        raise InputError(f"not a number format: {spec!r}")
    key = spec.strip().lower().replace("_", "-")
    if key in PRESETS:
        return PRESETS[key]
    if key in _AMBIGUOUS:
        raise InputError(_AMBIGUOUS[key])
    mods_text = ""
    base = key
    mt_mod = re.search(r"((?:-(?:sat|ftz|nonan|noinf|ieee))*)$", key)
    if mt_mod and mt_mod.group(1):
        mods_text, base = mt_mod.group(1), key[:mt_mod.start()]
    if base in _OCP:
        key = _CANONICAL[_OCP[base]].split("-", 1)[0] + "-" + _OCP[base] + mods_text
    elif base in _AMBIGUOUS and not re.search(r"-(ieee|noinf|nonan)(-|$)", mods_text):
        raise InputError(_AMBIGUOUS[base])
    mt = _NAME.match(key)
    if not mt:
        raise InputError(f"unknown number format {spec!r}: use one of {', '.join(format_names())}, an ml_dtypes "
                         f"name (e.g. float8_e4m3fn) or a custom eXmY (e.g. e5m7, e3m4-sat-ftz)")
    prefix, width, e, m = mt.group(1), mt.group(2), int(mt.group(3)), int(mt.group(4))
    bias_txt, suffix = mt.group(5), mt.group(6) or ""
    mods = [x for x in mt.group(7).split("-") if x]
    core = f"e{e}m{m}" + (f"b{bias_txt}" if bias_txt else "") + suffix
    if prefix == "float" and core not in _ML_CORES:
        raise InputError(f"unknown number format {spec!r}: ml_dtypes has no float{width}_{core} (its names: "
                         f"{', '.join(sorted(ML_DTYPES_NAMES))})")
    kinds = [x for x in mods if x in ("nonan", "noinf", "ieee")]
    if len(kinds) > 1 or (kinds and suffix):
        raise InputError(f"format {spec!r}: give at most one of the suffixes fn / fnuz / fnu / -ieee / -noinf / -nonan")
    if kinds or core not in _ML_CORES:
        special = {"fn": "fn", "fnuz": "fnuz", "fnu": "fnu", "": "ieee"}[suffix]
        if kinds:
            special = {"nonan": "none", "noinf": "fn", "ieee": "ieee"}[kinds[0]]
        bias = int(bias_txt) if bias_txt else None
        if bias is not None and bias == _default_bias(e, special):
            bias = None
    else:
        (e, m, special, bias), _, _ = _ML_CORES[core]
        bias = None if bias == _default_bias(e, special) else bias
    sub = "ftz" not in mods and special != "fnu"
    fmt = FloatFormat(e, m, subnormals=sub, special=special, saturate="sat" in mods, exp_bias=bias)
    if width is not None and int(width) != fmt.bits:
        raise InputError(f"format {spec!r}: e{e}m{m} has {fmt.bits} bits, not {width}")
    shared = _ML_CORE_OF.get((fmt.exp_bits, fmt.man_bits, fmt.special, fmt.bias))
    if shared is not None:
        canon = _CANONICAL[shared] + ("-sat" if fmt.saturate else "") + \
            ("-ftz" if not fmt.subnormals and fmt.special != "fnu" else "")
        return FloatFormat(fmt.exp_bits, fmt.man_bits, fmt.subnormals, fmt.special, fmt.saturate, canon, fmt.exp_bias)
    return fmt
