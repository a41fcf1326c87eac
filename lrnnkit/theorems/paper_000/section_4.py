"""Paper 000: 000:section-4.3-multi-token, 000:section-4.2-rotation, 000:equation-5-inclusion.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ...exact import cos2pi, sin2pi
from .._exact import _mat_json, _st, dot, gh, gh_product, householder, mm
from .._exact import det, mv, search, st_gh_product, tr
from ..registry import CheckResult, entry
from ._common import rot, swap_vector, transpositions


@entry("000:section-4.3-multi-token", perturb={"swap_slack": -1})
def check_multi_token(profile: str = "quick", swap_slack: int = 0) -> CheckResult:
    A1 = gh(2, (F(0), F(1)))
    A0 = gh(2, swap_vector(0, 1, 2))
    C = mm(A1, A0)
    if C == tr(C):
        return CheckResult("holds", "product turned out symmetric")
    for n in range(2, 6):
        for p in itertools.permutations(range(n)):
            moved = sum(1 for i in range(n) if p[i] != i)
            if moved and len(transpositions(p)) > max(moved - 1 + swap_slack, 0):
                return CheckResult("falsified", "a permutation moving k + 1 points needs more than k swaps",
                                   counterexample=list(p))
    return CheckResult("holds-as-corrected", f"C = {_mat_json(C)} is not symmetric, so not in M_1^2; corrected "
                       "counting verified for all permutations of size <= 5",
                       counterexample={"C": _mat_json(C)}, corrected="k factors for k letters; H_t = C H_{t-k}")


@entry("000:section-4.2-rotation", perturb={"second": ((F(-1), F(0)), (F(0), F(1)))})
def check_rotation(profile: str = "quick", second=((F(1), F(0)), (F(0), F(-1)))) -> CheckResult:
    M = 12 if profile == "quick" else 30
    for m in range(1, M + 1):
        v1 = (-sin2pi(1, 2 * m), cos2pi(1, 2 * m))       # angle pi/m + pi/2
        H1 = householder(2, v1)
        H2 = second
        if mm(H1, H2) != rot(1, m):
            return CheckResult("falsified", "R(2 pi/m) is not H1 H2", counterexample={"m": m})
        states = [mv(rot(t, m), (F(1), F(0))) for t in range(m)]
        if len(set(states)) != m or any(dot(s, s) != 1 for s in states):
            return CheckResult("falsified", "states not distinct unit vectors", counterexample={"m": m})
        if mv(rot(1, m), states[-1]) != states[0]:
            return CheckResult("falsified", "R^m != I", counterexample={"m": m})
    return CheckResult("holds", f"m = 1..{M}: R(2 pi/m) = H1 H2 exactly, distinct unit states, period m")


@entry("000:equation-5-inclusion", perturb={"pad_beta": 1})
def check_inclusion(profile: str = "quick", pad_beta=0) -> CheckResult:
    N = 40 if profile == "quick" else 400
    st = _st()

    def bad(args):
        facs, pad = args
        n = len(facs[0][1])
        padded = list(facs) + [(F(pad_beta), facs[0][1])] * pad
        return gh_product(facs, n) != gh_product(padded, n)
    found = search(st.tuples(st_gh_product(2, 3, 0, 2), st.integers(0, 2)), bad, N)
    if found is not None:
        return CheckResult("falsified", "padding changed the product", counterexample=repr(found))
    r1 = gh(2, (F(3, 5), F(4, 5)))
    det1 = det(r1)
    r2 = mm(r1, gh(2, (F(1), F(0))))
    det2 = det(r2)
    if not (det1 == -1 and det2 == 1):
        return CheckResult("open", "determinant control failed")
    return CheckResult("holds", f"identity padding verified on {N} products; the hypothesis 1 in Omega is necessary "
                                "(det of one vs two reflections)")
