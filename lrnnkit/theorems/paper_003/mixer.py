"""Paper 003: 003:claim-D.3.2.full-rank, 003:claim-D.3.2.rank-r, 003:claim-D.3.2.contractive, 003:claim-D.3.2.negative-eigenvalues, 003:claim-D.3.2.mixer-contractive,
003:claim-D.3.2.capability.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from .._exact import det, exact_identity as eye, exact_matmul as mm, find_or_none, fstr, is_pd, mstr
from .._exact import mscale_list as scal, msub as sub, norm2_lt1, rank
from ..registry import CheckResult, entry
from ._common import gh


# =========================================================================== D.3.2 claims on eq. (10)
def mixer(alphas: list, us: list) -> list:
    """Q = prod_{i=1}^r (I - 2 alpha_i u_i u_i^T / u_i^T u_i) (eq. 10), factor 1 leftmost."""
    n = len(us[0])
    Q = eye(n)
    for a, u in zip(alphas, us):
        Q = mm(Q, gh(a, u))
    return Q


def _mixer_strategy(alpha_lo: int, alpha_hi: int, den: int = 8):
    from hypothesis import strategies as st
    return st.tuples(st.integers(1, 3), st.integers(1, 3)).flatmap(
        lambda nr: st.tuples(
            st.lists(st.integers(alpha_lo, alpha_hi).map(lambda k: F(k, den)), min_size=nr[1], max_size=nr[1]),
            st.lists(st.lists(st.integers(-3, 3).map(F), min_size=nr[0], max_size=nr[0]).filter(any),
                     min_size=nr[1], max_size=nr[1])))


def _mixer_json(alphas, us, Q=None):
    d = {"alphas": [fstr(a) for a in alphas], "u": [[fstr(x) for x in u] for u in us]}
    if Q is not None:
        d["Q"] = mstr(Q)
    return d


@entry("003:claim-D.3.2.full-rank", perturb={"det_factor": 1})
def check_claim_full_rank(profile: str, det_factor: int = 2) -> CheckResult:
    def bad(args):
        alphas, us = args
        if any(not (0 < a < 1) for a in alphas):
            return False
        return det(mixer(alphas, us)) == 0

    cx = find_or_none(_mixer_strategy(1, 7), bad, profile, 100, 1500)

    def bad_corr(args):
        alphas, us = args
        if any(not (0 < a < 1) or a == F(1, 2) for a in alphas):
            return False
        Q = mixer(alphas, us)
        dq = det(Q)
        prod = F(1)
        for a in alphas:
            prod *= 1 - det_factor * a
        return dq == 0 or dq != prod

    cx2 = find_or_none(_mixer_strategy(1, 7), bad_corr, profile, 100, 1500)
    if cx is None:
        return CheckResult("holds", "no singular Q found")
    rec = ([F(1, 2)], [[F(1)]])
    assert mixer(*rec) == [[F(0)]]
    cxj = _mixer_json(*rec, mixer(*rec))
    if cx2 is not None:
        return CheckResult("falsified", "corrected statement fails too", counterexample=_mixer_json(*cx2))
    return CheckResult("holds-as-corrected", "alpha = 1/2 gives a singular Q; with alpha != 1/2, det Q = "
                       "prod(1 - 2 alpha_i) != 0 on every example", counterexample=cxj,
                       corrected="invertible iff no alpha_i = 1/2")


@entry("003:claim-D.3.2.rank-r", perturb={"slack": -1})
def check_claim_rank_r(profile: str, slack: int = 0) -> CheckResult:
    def bad(args):
        alphas, us = args
        return rank(sub(eye(len(us[0])), mixer(alphas, us))) > len(alphas) + slack

    cx = find_or_none(_mixer_strategy(1, 7), bad, profile, 100, 1500)
    if cx is not None:
        return CheckResult("falsified", "rank exceeds r", counterexample=_mixer_json(*cx))
    return CheckResult("holds", "rank(I - Q) <= r on every example")


def _mixer_contractive(alphas, us) -> bool:
    Q = mixer(alphas, us)
    return norm2_lt1(sub(eye(len(Q)), Q))


@entry("003:claim-D.3.2.contractive", perturb={"alpha_budget": F(1)})
def check_claim_contractive(profile: str, alpha_budget=F(1, 2)) -> CheckResult:
    def bad(args):
        alphas, us = args
        return not _mixer_contractive(alphas, us)

    cx = find_or_none(_mixer_strategy(1, 7), bad, profile, 100, 1500)
    # r >= 2 with every alpha < 1/2 still fails: witness
    two = ([F(7, 16), F(7, 16)], [[F(1), F(0)], [F(1), F(1)]])
    two_fails = not _mixer_contractive(*two)

    def bad_corr(args):
        alphas, us = args
        if sum(alphas) >= alpha_budget:
            return False
        return not _mixer_contractive(alphas, us)

    cx2 = find_or_none(_mixer_strategy(1, 7, 16), bad_corr, profile, 100, 1500)
    if cx is None:
        return CheckResult("holds", "no non-contractive I - Q found")
    if cx2 is not None:
        return CheckResult("falsified", "corrected condition fails too", counterexample=_mixer_json(*cx2))
    rec = ([F(1, 2)], [[F(1)]])
    assert not _mixer_contractive(*rec)
    return CheckResult("holds-as-corrected", "alpha >= 1/2 breaks contractivity; sum alpha < 1/2 always contractive",
                       counterexample=_mixer_json(*rec, sub(eye(1), mixer(*rec))),
                       corrected="sum_i alpha_i < 1/2 implies ||I - Q||_2 < 1",
                       details={"r2_alpha_below_half_fails": two_fails, "r2_witness": _mixer_json(*two)})


@entry("003:claim-D.3.2.negative-eigenvalues", perturb={"require_contractive": False})
def check_claim_negative_eigenvalues(profile: str, require_contractive: bool = True) -> CheckResult:
    def has_neg_eig(Q) -> bool:
        ev = np.linalg.eigvals(np.array([[float(x) for x in r] for r in Q]))
        # tolerance: eigenvalues of <= 3x3 matrices with entries k/8-scale, computed in float64; a negative real
        # eigenvalue is accepted when its imaginary part is below 1e-12 and its value below -1e-12
        return bool(np.any((np.abs(ev.imag) < 1e-12) & (ev.real < -1e-12)))

    def both(args):
        alphas, us = args
        Q = mixer(alphas, us)
        return (_mixer_contractive(alphas, us) or not require_contractive) and has_neg_eig(Q)

    found = find_or_none(_mixer_strategy(1, 7), both, profile, 100, 1500)
    if found is not None:
        return CheckResult("holds", "found a mixer with both properties", details=_mixer_json(*found))
    cx = ([F(3, 4)], [[F(1)]])
    Q = mixer(*cx)
    assert Q == [[F(-1, 2)]] and not _mixer_contractive(*cx)
    return CheckResult("falsified", "no eq.-(10) mixer has both a negative eigenvalue and a contractive I - Q "
                       "(impossible for any matrix)", counterexample={"N": 1, "r": 1, "alpha": "3/4", "u": ["1"],
                                                                     "Q": mstr(Q), "I_minus_Q": [["3/2"]]})


@entry("003:claim-D.3.2.mixer-contractive", perturb={"upper": 1})
def check_claim_mixer_contractive(profile: str, upper: int = 2) -> CheckResult:
    # printed statement, its three counterexamples (exact)
    c1 = not norm2_lt1(sub(eye(1), [[F(-1)]]))
    c2 = not norm2_lt1(sub(eye(1), [[F(0)]]))
    Qlr = [[F(1, 2), F(0)], [F(0), F(0)]]
    c3 = not norm2_lt1(sub(eye(2), Qlr))
    if not (c1 or c2 or c3):
        return CheckResult("holds", "all three readings contractive")
    # corrected: symmetric Q (random rational) -> equivalence with spectrum in (0, 2), exactly
    from hypothesis import strategies as st
    sym = st.integers(1, 3).flatmap(lambda n: st.lists(st.integers(-12, 12).map(lambda k: F(k, 6)),
                                                       min_size=n * (n + 1) // 2, max_size=n * (n + 1) // 2)
                                    .map(lambda v, n=n: _sym_from(v, n)))

    def bad(Q):
        n = len(Q)
        lhs = norm2_lt1(sub(eye(n), Q))
        rhs = is_pd(Q) and is_pd(sub(scal(upper, eye(n)), Q))
        return lhs != rhs

    cx = find_or_none(sym, bad, profile, 100, 1500)
    # rotations with rational cos/sin from Pythagorean triples: ||I - R|| < 1 iff cos > 1/2
    rot_ok = True
    for a, b, c in [(3, 4, 5), (4, 3, 5), (5, 12, 13), (12, 5, 13), (8, 15, 17), (15, 8, 17), (20, 21, 29),
                    (-3, 4, 5), (0, 1, 1), (1, 0, 1), (-1, 0, 1)]:
        co, si = F(a, c), F(b, c)
        R = [[co, -si], [si, co]]
        rot_ok &= norm2_lt1(sub(eye(2), R)) == (co > F(1, 2))
    if cx is not None or not rot_ok:
        return CheckResult("falsified", "corrected statement fails", counterexample=None if cx is None else mstr(cx))
    return CheckResult("holds-as-corrected", "printed sufficient conditions fail (Q = -1, Q = 0, low-rank sum); "
                       "corrected spectral characterization holds on every example",
                       counterexample={"orthogonal_Q": "-1", "contractive_Q": "0", "low_rank_I_minus_Q":
                                       [["1/2", "0"], ["0", "1"]]},
                       corrected="symmetric Q: contractive I - Q iff spec(Q) in (0,2); rotation: iff cos > 1/2")


def _sym_from(v: list, n: int) -> list:
    Q = [[F(0)] * n for _ in range(n)]
    k = 0
    for i in range(n):
        for j in range(i, n):
            Q[i][j] = Q[j][i] = v[k]
            k += 1
    return Q


def has_negative_eigenvalue(Q: list) -> bool:
    """Q has a real eigenvalue < 0 (exact: Sturm count of the characteristic polynomial's roots in (-oo, 0))."""
    import sympy
    x = sympy.Symbol("x")
    p = sympy.Matrix([[sympy.Rational(v.numerator, v.denominator) for v in r] for r in Q]).charpoly(x)
    return p.count_roots(-sympy.oo, 0) - (1 if p.eval(0) == 0 else 0) > 0


@entry("003:claim-D.3.2.capability", perturb={"alpha_hi": 4, "r_max": 1})
def check_negative_capability(profile: str, alpha_hi: int = 7, r_max: int = 3) -> CheckResult:
    if 6 <= alpha_hi and r_max >= 1:
        Q = mixer([F(3, 4)], [[F(1)]])
        if has_negative_eigenvalue(Q):
            return CheckResult("holds", "N = 1, r = 1, alpha = 3/4: Q = -1/2", details={"Q": mstr(Q)})
    found = find_or_none(_mixer_strategy(1, alpha_hi),
                         lambda a: len(a[0]) <= r_max and has_negative_eigenvalue(mixer(*a)), profile, 100, 1500)
    if found is not None:
        return CheckResult("holds", "a mixer with a negative eigenvalue", details=_mixer_json(*found))
    return CheckResult("falsified", f"no mixer with alpha <= {alpha_hi}/8 and r <= {r_max} has a negative eigenvalue",
                       counterexample={"alpha_max": f"{alpha_hi}/8", "r_max": r_max})
