"""Helpers shared by several statement groups of paper 000 (split from the former paper_000.py).

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import functools
from fractions import Fraction as F
from typing import Sequence

from ...exact import cos2pi, sin2pi


PAPER = "000"


def charpoly(M) -> list:
    """Coefficients (highest degree first, monic) of det(x I - M) for a rational matrix (sympy, exact)."""
    import sympy
    S = sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in r] for r in M])
    return [F(int(sympy.fraction(c)[0]), int(sympy.fraction(c)[1])) for c in S.charpoly().all_coeffs()]


def poly_div_linear(p: list, r) -> tuple:
    """Synthetic division of p (highest first) by (x - r): quotient, remainder."""
    q, acc = [], F(0)
    for c in p:
        acc = acc * r + c
        q.append(acc)
    return q[:-1], q[-1]


def swap_vector(i: int, j: int, n: int) -> tuple:
    """v_ij of the proof of Proposition 1 (000, App. C.1) without the 1/sqrt(2): e_i - e_j."""
    return tuple(F(1) if r == i else F(-1) if r == j else F(0) for r in range(n))


def transpositions(p: Sequence[int]) -> list:
    """The permutation as a product of n - (number of cycles) transpositions, in matrix order: with
    ``P = S_1 S_2 ... S_k`` (S_l the swap matrices)."""
    n = len(p)
    seen, out = [False] * n, []
    for s in range(n):
        if seen[s]:
            continue
        cyc, q = [], s
        while not seen[q]:
            seen[q] = True
            cyc.append(q)
            q = p[q]
        # the cycle c0 -> c1 -> ... -> c_{L-1} -> c0 equals (c0 c1)(c1 c2)...(c_{L-2} c_{L-1}) applied right to left
        for a in range(len(cyc) - 1):
            out.append((cyc[a], cyc[a + 1]))
    return out


@functools.lru_cache(maxsize=4096)
def rot(k: int, m: int) -> tuple:
    """R(2 pi k / m) exactly (cached: the breadth-first searches reuse a few angles many times)."""
    c, s = cos2pi(k, m), sin2pi(k, m)
    return ((c, -s), (s, c))


@functools.lru_cache(maxsize=4096)
def refl(k: int, m: int) -> tuple:
    """H(2 pi k / m) = [[cos, sin], [sin, -cos]]: the reflection across the line at angle pi k / m (000, App. D)."""
    c, s = cos2pi(k, m), sin2pi(k, m)
    return ((c, s), (s, -c))
