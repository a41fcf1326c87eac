"""Paper 000: 000:section-4.3-multi-token, 000:section-4.2-rotation, 000:equation-5-inclusion.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ...exact import cos2pi, sin2pi
from .._exact import _mat_json, _st, dot, gh, gh_product, householder, mm
from .._exact import det, mv, search, st_gh_product, tr
from ..registry import CheckResult, statement
from ._common import PAPER, rot, swap_vector, transpositions


@statement(
    id="000:section-4.3-multi-token", paper=PAPER, perturb={"swap_slack": -1}, kind="claim",
    statement="(Section 4.3, after Theorem 3) If each transition uses k letters and B = 0, A: R^l -> M_1^n([-1, 1]), "
              "the layer can model permutations that change up to k + 1 elements since H_t = C(x_t, ..., x_{t-k}) "
              "H_{t-k}, C(x_t, ..., x_{t-k}) := A(x_t) A(x_{t-1}) ... A(x_{t-k}) in M_k^n([-1, 1]).",
    hypotheses="A(x) single GH matrices with eigenvalues in [-1, 1].",
    conclusion="The product of the k + 1 matrices A(x_t)...A(x_{t-k}) lies in M_k^n and maps H_{t-k} to H_t.",
    verdict="holds-as-corrected",
    evidence="Off by one: A(x_t)...A(x_{t-k}) has k + 1 factors, and H_t = C H_{t-k-1}. Counterexample for k = 1, "
             "n = 2: A(x_t) = I - 2 e_2 e_2^T = diag(1, -1), A(x_{t-1}) = swap = I - (e_1 - e_2)(e_1 - e_2)^T give "
             "C = [[0, 1], [-1, 0]], not symmetric, hence not in M_1^2 (every single GH matrix is symmetric). "
             "Corrected: with k letters per transition, C(x_t, ..., x_{t-k+1}) = A(x_t)...A(x_{t-k+1}) in "
             "M_k^n([-1, 1]), H_t = C H_{t-k}, and such products realise every permutation moving <= k + 1 points "
             "(verified exhaustively for n <= 5: n - c(P) <= k swaps).",
    counterexample={"k": 1, "A(x_t)": [[1, 0], [0, -1]], "A(x_{t-1})": [[0, 1], [1, 0]], "C": [[0, 1], [-1, 0]],
                    "why": "C is not symmetric, every element of M_1^2 is"},
    corrected="With k letters per transition: H_t = C(x_t, ..., x_{t-k+1}) H_{t-k}, C = A(x_t)...A(x_{t-k+1}) in "
              "M_k^n([-1, 1]); permutations moving up to k + 1 elements are products of <= k swaps.")
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


@statement(
    id="000:section-4.2-rotation", paper=PAPER, perturb={"second": ((F(-1), F(0)), (F(0), F(1)))}, kind="claim",
    statement="(Section 4.2) For any m in N there exist unit vectors v_1, v_2 in R^2 with R(theta) = "
              "(I - 2 v_1 v_1^T)(I - 2 v_2 v_2^T), theta = 2 pi / m; with A(1) = R(theta), H0 = (1, 0)^T and "
              "dec(H, x) = argmax_i D_i^T H, D_i = R(i theta) H0, the one-layer LRNN outputs t mod m on 1^t.",
    hypotheses="m >= 1.",
    conclusion="Rotations are products of two reflections and count modulo m.",
    verdict="holds",
    evidence="Exact in cyclotomic arithmetic for m = 1..12 (quick) / 1..30 (deep): v_2 = e_2, v_1 = (-sin(theta/2), "
             "cos(theta/2)) give R(theta) entrywise; the states R(t theta) H0 are m distinct unit vectors, so the "
             "argmax decoder returns t mod m exactly (strict maximum D_i^T D_i = 1 > D_j^T D_i).",
    notes="000, Section 4.2.")
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


@statement(
    id="000:equation-5-inclusion", paper=PAPER, perturb={"pad_beta": 1}, kind="claim",
    statement="(Section 4.3, after eq. 5) M_k^n(Omega) subset M_{k'}^n(Omega') if 1 in Omega, k' >= k and "
              "Omega subset Omega'.",
    hypotheses="1 in Omega (the identity I - 0 v v^T is an admissible factor), k' >= k, Omega subset Omega'.",
    conclusion="Padding a product with k' - k identity factors stays in the larger set.",
    verdict="holds",
    evidence="Exact search: products of k <= 3 factors padded with k' - k <= 2 identity factors (beta = 0, "
             "eigenvalue 1 in Omega) are unchanged entrywise; every factor's eigenvalue 1 - beta stays in Omega'. "
             "With 1 not in Omega (e.g. Omega = {-1}) the inclusion M_1^2({-1}) subset M_2^2({-1}) fails: a single "
             "reflection has determinant -1, a product of two has determinant +1 (checked), so the hypothesis "
             "1 in Omega is needed.",
    notes="000, Section 4.3.")
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
