"""Exact scalars: rationals and elements of cyclotomic fields Q(zeta_N).

Every weight of every construction in the papers lies in a cyclotomic field: permutations and reflections are
rational, ``cos(2 pi k / m)`` and ``sin(2 pi k / m)`` lie in Q(zeta_{4m}), the golden ratio of the icosahedral
rotations (001, S_4 / A_5 in 3-D) lies in Q(zeta_5). Keeping weights in these fields makes certification an exact
computation: a value is zero iff its reduced coefficient vector is zero, so hashing reachable states is exact.

Representation. ``Cyc(N, coeffs)`` is ``sum_i coeffs[i] zeta_N^i`` reduced modulo the N-th cyclotomic polynomial,
so coefficient vectors have length phi(N) and are canonical. Rational values are returned as
:class:`fractions.Fraction` (never as a ``Cyc``), so that a rational value has one representation whatever field it
was computed in. Within one computation all non-rational values should live in one field (see :func:`lift`);
:class:`Cyc` lifts mixed operands to ``lcm(N1, N2)`` automatically.

Why not sympy numbers or sympy's AlgebraicField: sympy expressions need ``simplify`` to decide zero (slow, not
always conclusive) and their string form is parsed with ``eval``; sympy's algebraic fields need a primitive element
per field and offer no cheap sign test. This module is ~200 lines, exact, canonical and eval-free.

Serialization (model files): a rational is the string ``"p/q"`` or ``"p"``; a cyclotomic element is
``{"cyc": N, "c": ["p/q", ...]}``. Parsing uses :class:`fractions.Fraction` on strings, never ``eval``.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Iterable, Sequence

import mpmath

from .errors import InputError
from .limits import check_number_text

__all__ = ["Cyc", "cos2pi", "sin2pi", "zeta", "to_exact", "exact_to_json", "exact_from_json", "to_float",
           "to_complex", "sign", "is_zero", "to_sympy", "Exact", "exact_sqrt_rational"]

Exact = Any  # int | Fraction | Cyc


@lru_cache(maxsize=None)
def _cyclotomic_poly(N: int) -> tuple[int, ...]:
    """Integer coefficients of Phi_N, lowest degree first (monic)."""
    import sympy
    x = sympy.Symbol("x")
    p = sympy.Poly(sympy.cyclotomic_poly(N, x), x)
    return tuple(int(c) for c in reversed(p.all_coeffs()))


def _phi(N: int) -> int:
    return len(_cyclotomic_poly(N)) - 1


def _reduce(N: int, coeffs: list) -> tuple:
    """Reduce a polynomial in zeta (coefficient list, any length) modulo Phi_N; length phi(N) result."""
    poly = _cyclotomic_poly(N)
    d = len(poly) - 1
    c = list(coeffs)
    for k in range(len(c) - 1, d - 1, -1):
        lead = c[k]
        if lead:
            # zeta^k = zeta^(k-d) * zeta^d and zeta^d = -sum_{j<d} poly[j] zeta^j
            for j in range(d):
                if poly[j]:
                    c[k - d + j] -= lead * poly[j]
        c[k] = 0
    c = c[:d] + [0] * (d - len(c))
    return tuple(Fraction(x) for x in c)


class Cyc:
    """An element of Q(zeta_N) that is not rational (rational results come back as Fraction)."""

    __slots__ = ("N", "c", "_h")

    def __init__(self, N: int, c: Sequence):
        self.N = int(N)
        self.c = tuple(c)
        self._h = None

    # construction ---------------------------------------------------------
    @staticmethod
    def make(N: int, coeffs: Sequence) -> "Cyc | Fraction":
        c = _reduce(N, list(coeffs))
        if all(x == 0 for x in c[1:]):
            return Fraction(c[0]) if c else Fraction(0)
        return Cyc(N, c)

    def lifted(self, M: int) -> "Cyc":
        """The same value in Q(zeta_M), M a multiple of N."""
        if M == self.N:
            return self
        if M % self.N:
            raise ValueError(f"cannot lift Q(zeta_{self.N}) into Q(zeta_{M})")
        step = M // self.N
        big = [Fraction(0)] * (step * len(self.c))
        for i, x in enumerate(self.c):
            big[i * step] = x
        return Cyc(M, _reduce(M, big))

    # arithmetic -----------------------------------------------------------
    def _coerce(self, other):
        if isinstance(other, Cyc):
            if other.N == self.N:
                return self, other
            M = math.lcm(self.N, other.N)
            return self.lifted(M), other.lifted(M)
        if isinstance(other, (int, Fraction)):
            return self, Cyc(self.N, (Fraction(other),) + (Fraction(0),) * (len(self.c) - 1))
        return None, None

    def __add__(self, other):
        a, b = self._coerce(other)
        if a is None:
            return NotImplemented
        return Cyc.make(a.N, [x + y for x, y in zip(a.c, b.c)])

    __radd__ = __add__

    def __neg__(self):
        return Cyc(self.N, tuple(-x for x in self.c))

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if isinstance(other, (int, Fraction)):
            if other == 0:
                return Fraction(0)
            return Cyc(self.N, tuple(x * other for x in self.c))
        a, b = self._coerce(other)
        if a is None:
            return NotImplemented
        prod = [Fraction(0)] * (len(a.c) + len(b.c) - 1)
        for i, x in enumerate(a.c):
            if x:
                for j, y in enumerate(b.c):
                    if y:
                        prod[i + j] += x * y
        return Cyc.make(a.N, prod)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (int, Fraction)):
            return self * (1 / Fraction(other))
        raise TypeError("division by a non-rational cyclotomic number is not supported")

    def __eq__(self, other):
        if isinstance(other, Cyc):
            a, b = self._coerce(other)
            return a.c == b.c
        return False  # a Cyc is never rational

    def __hash__(self):
        if self._h is None:
            self._h = hash((self.N, self.c))
        return self._h

    # conversion -----------------------------------------------------------
    def to_mpc(self, dps: int = 30):
        with mpmath.workdps(dps):
            z = mpmath.expjpi(mpmath.mpf(2) / self.N)
            acc = mpmath.mpc(0)
            for i, x in enumerate(self.c):
                if x:
                    acc += mpmath.mpf(x.numerator) / x.denominator * z ** i
            return acc

    def __complex__(self):
        return complex(self.to_mpc(30))

    def __float__(self):
        z = complex(self)
        return z.real

    def __repr__(self):
        terms = [f"{x}*z{self.N}^{i}" for i, x in enumerate(self.c) if x]
        return "Cyc(" + " + ".join(terms) + ")"


def zeta(N: int, k: int = 1) -> "Cyc | Fraction":
    """zeta_N^k = exp(2 pi i k / N)."""
    k %= N
    return Cyc.make(N, [0] * k + [1])


def cos2pi(k: int, m: int) -> "Cyc | Fraction":
    """cos(2 pi k / m) exactly, in Q(zeta_m)."""
    return (zeta(m, k) + zeta(m, -k)) * Fraction(1, 2)


def sin2pi(k: int, m: int) -> "Cyc | Fraction":
    """sin(2 pi k / m) = cos(2 pi (4k - m) / (4m)) exactly, in Q(zeta_{4m})."""
    return cos2pi(4 * k - m, 4 * m)


def exact_sqrt_rational(q: Fraction) -> Fraction | None:
    """The rational square root of q if it has one, else None."""
    q = Fraction(q)
    if q < 0:
        return None
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        return Fraction(rn, rd)
    return None


def is_zero(x: Exact) -> bool:
    return (not isinstance(x, Cyc)) and x == 0


def to_complex(x: Exact) -> complex:
    return complex(x) if isinstance(x, Cyc) else complex(float(x))


def to_float(x: Exact) -> float:
    """The float64 nearest to a real exact value (rounded from a 30-digit evaluation)."""
    if isinstance(x, Cyc):
        z = x.to_mpc(40)
        if abs(z.imag) > mpmath.mpf(10) ** -30 * (1 + abs(z.real)):
            raise ValueError(f"{x!r} is not real")
        return float(z.real)
    return float(x)


def sign(x: Exact) -> int:
    """The exact sign of a real exact value: zero is decided exactly; a nonzero cyclotomic value is evaluated with
    increasing precision until the error bound (sum ``|c_i|`` 2^-prec) separates it from zero."""
    if not isinstance(x, Cyc):
        return (x > 0) - (x < 0)
    dps = 30
    bound_scale = sum(abs(c) for c in x.c) + 1
    while True:
        z = x.to_mpc(dps)
        err = mpmath.mpf(float(bound_scale)) * mpmath.mpf(10) ** (-(dps - 5))
        if abs(z.imag) > err and abs(z.imag) > abs(z.real):
            raise ValueError(f"sign of a non-real number {x!r}")
        if abs(z.real) > err:
            return 1 if z.real > 0 else -1
        dps *= 2
        if dps > 2000:  # a nonzero algebraic number this close to 0 would need astronomically large coefficients
            raise ArithmeticError(f"could not decide the sign of {x!r}")


def to_exact(x: Any) -> Exact:
    """Accept int / Fraction / Cyc / exact-decimal strings ("3/4", "-2", "0.5"); floats only if dyadic-exact."""
    if isinstance(x, bool):
        raise InputError(f"boolean {x!r} is not a number")
    if isinstance(x, (int, Fraction, Cyc)):
        return Fraction(x) if isinstance(x, int) else x
    if isinstance(x, float):
        return Fraction(x)  # exact binary value of the float
    if isinstance(x, str):
        check_number_text(x, "exact number")
        try:
            return Fraction(x)
        except (ValueError, ZeroDivisionError):
            raise InputError(f"not an exact number: {x!r}") from None
    if isinstance(x, dict):
        return exact_from_json(x)
    raise InputError(f"not an exact number: {x!r}")


def exact_to_json(x: Exact):
    if isinstance(x, Cyc):
        return {"cyc": x.N, "c": [str(c) for c in x.c]}
    return str(Fraction(x))


def exact_from_json(obj) -> Exact:
    if isinstance(obj, str):
        return to_exact(obj)
    if isinstance(obj, int) and not isinstance(obj, bool):
        return Fraction(obj)
    if isinstance(obj, dict) and set(obj) == {"cyc", "c"}:
        N = obj["cyc"]
        if not isinstance(N, int) or isinstance(N, bool) or not 1 <= N <= 10_000:
            raise InputError(f"bad cyclotomic order {N!r} in exact value {obj!r}")
        c = obj["c"]
        if not isinstance(c, list) or len(c) != _phi(N):
            raise InputError(f"cyclotomic value needs phi({N}) = {_phi(N)} coefficients: {obj!r}")
        return Cyc.make(N, [to_exact(v) for v in c])
    raise InputError(f"not an exact value: {obj!r}")


def to_sympy(x: Exact):
    """A sympy expression of the exact value, simplified to cos/sin form where possible (for documentation)."""
    import sympy
    if not isinstance(x, Cyc):
        return sympy.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else sympy.Integer(x)
    z = sympy.exp(2 * sympy.pi * sympy.I / x.N)
    expr = sum((sympy.Rational(c.numerator, c.denominator) * z ** i for i, c in enumerate(x.c) if c), sympy.S(0))
    expr = sympy.nsimplify(sympy.expand_complex(expr))
    return sympy.simplify(expr)


def common_order(values: Iterable[Exact]) -> int:
    """lcm of the cyclotomic orders of the given values (1 if all rational)."""
    N = 1
    for v in values:
        if isinstance(v, Cyc):
            N = math.lcm(N, v.N)
    return N
