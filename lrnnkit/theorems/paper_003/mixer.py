"""Paper 003: 003:claim-D.3.2.full-rank, 003:claim-D.3.2.rank-r, 003:claim-D.3.2.contractive, 003:claim-D.3.2.negative-eigenvalues, 003:claim-D.3.2.mixer-contractive.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from .._exact import det, exact_identity as eye, exact_matmul as mm, find_or_none, fstr, is_pd, mstr
from .._exact import mscale_list as scal, msub as sub, norm2_lt1, rank
from ..registry import CheckResult, statement
from ._common import PAPER, gh


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


@statement(
    id="003:claim-D.3.2.full-rank", paper=PAPER, perturb={"det_factor": 1}, kind="claim",
    statement="Q_t = prod_{i=1}^r (I - 2 alpha_it u_it u_it^T) with 0 < alpha_it < 1 and unit vectors u_it (eq. 10) "
              "'avoids rank collapse by forcing Q_t to be full-rank'.",
    hypotheses="0 < alpha_i < 1, ||u_i|| = 1, any r >= 1, any N.",
    conclusion="Q_t is invertible.",
    verdict="holds-as-corrected",
    evidence="Exact search: alpha = 1/2 makes the factor I - u u^T a projection. Minimal counterexample N = 1, r = 1, "
             "alpha = 1/2, u = (1): Q = 1 - 2(1/2) = 0. Corrected (alpha_i != 1/2) passes the same search: each factor "
             "has eigenvalues 1 and 1 - 2 alpha_i != 0.",
    counterexample={"N": 1, "r": 1, "alpha": "1/2", "u": ["1"], "Q": [["0"]]},
    corrected="Q_t is invertible iff no alpha_it equals 1/2 (det Q_t = prod_i (1 - 2 alpha_it)).")
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


@statement(
    id="003:claim-D.3.2.rank-r", paper=PAPER, perturb={"slack": -1}, kind="claim",
    statement="For Q_t of eq. (10) with r reflections, I - Q_t has rank r (at most r).",
    hypotheses="0 < alpha_i < 1, r factors.",
    conclusion="rank(I - Q_t) <= r.",
    verdict="holds",
    evidence="Exact rank computation over the hypothesis search space (N <= 3, r <= 3, rational u_i, alpha = k/8): "
             "rank(I - Q) <= r always (I - prod_i (I + R_i) is a sum of products each containing some R_i of rank 1). "
             "'Rank r' exactly fails when r > N or the u_i are dependent; the claim is read as 'at most r'.")
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


@statement(
    id="003:claim-D.3.2.contractive", paper=PAPER, perturb={"alpha_budget": F(1)}, kind="claim",
    tests=["proofs_tests/test_theorems_B_003.py::test_mixer_r2_witness"],
    statement="With Q_t of eq. (10) (0 < alpha_it < 1, unit u_it), 'I - Q_t of rank r remains contractive and "
              "stabilizes the fixed-point iteration' (the hypothesis ||I - Q||_2 < 1 of Theorem 2.1).",
    hypotheses="0 < alpha_i < 1.",
    conclusion="||I - Q_t||_2 < 1.",
    verdict="holds-as-corrected",
    evidence="Exact search: for r = 1, I - Q = 2 alpha u u^T has norm 2 alpha >= 1 when alpha >= 1/2. Minimal "
             "counterexample N = 1, r = 1, alpha = 1/2, u = (1): I - Q = 1. For r >= 2 even alpha_i < 1/2 does not "
             "suffice (e.g. N = 2, alpha = 7/16, 7/16, u = e1, e1 + e2 gives ||I - Q|| > 1). Corrected sufficient "
             "condition sum_i alpha_i < 1/2 (telescoping: ||I - Q|| <= sum_i 2 alpha_i) passes the same search.",
    counterexample={"N": 1, "r": 1, "alpha": "1/2", "u": ["1"], "I_minus_Q": [["1"]]},
    corrected="||I - Q_t||_2 <= 2 sum_i alpha_it, so I - Q_t is contractive whenever sum_i alpha_it < 1/2 "
              "(for r = 1: iff alpha < 1/2).")
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


@statement(
    id="003:claim-D.3.2.negative-eigenvalues", paper=PAPER, perturb={"require_contractive": False}, kind="claim",
    tests=["proofs_tests/test_theorems_B_003.py::test_negative_eigenvalue_excludes_contractive"],
    statement="The mixer Q_t of eq. (10) is such that I - Q_t 'remains contractive and stabilizes the fixed-point "
              "iteration' and 'Q_t also has negative eigenvalues as in (Grazzi et al., 2024)'.",
    hypotheses="Q_t as in eq. (10), 0 < alpha_it < 1.",
    conclusion="Both properties at once: ||I - Q_t||_2 < 1 and Q_t has a negative eigenvalue.",
    verdict="falsified",
    evidence="Two readings. This entry is the conjunction (one Q_t with both properties): falsified. The capability "
             "reading (eq. (10) mixers with 0 < alpha < 1 can have negative eigenvalues, the sentence's reference to "
             "Grazzi et al.) holds: 003:claim-D.3.2.negative-eigenvalues.capability. "
             "The conjunction is impossible for every matrix: if Q w = mu w with mu < 0 then ||(I - Q) w|| = "
             "(1 - mu)||w|| > ||w||. "
             "Exact search over eq. (10) mixers (N <= 3, r <= 3) finds no Q with both properties, and for r = 1 the "
             "two conditions are alpha < 1/2 versus alpha > 1/2. Minimal counterexample to the conjunction: N = 1, "
             "r = 1, alpha = 3/4: Q = -1/2 (negative eigenvalue) but I - Q = 3/2 (not contractive).",
    counterexample={"N": 1, "r": 1, "alpha": "3/4", "u": ["1"], "Q": [["-1/2"]], "I_minus_Q": [["3/2"]]},
    notes="Any Q with ||I - Q||_2 < 1 has all eigenvalues in the open disc |mu - 1| < 1 (real parts > 0). The "
          "negative eigenvalues that Grazzi et al. need and the contractivity that Theorem 2.1 needs exclude each "
          "other; the fixed-point RNN's dense matrix A_t = Q_t^{-1} Lambda_t can still have negative eigenvalues "
          "through Lambda_t, which Theorem 2.1 (corrected) then forbids as well.")
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


@statement(
    id="003:claim-D.3.2.mixer-contractive", paper=PAPER, perturb={"upper": 1}, kind="claim",
    statement="'Following Theorem 2.1, I - Q_t needs to be contractive which is satisfied if Q_t is either orthogonal "
              "or contractive as well. This can be controlled ensuring sum_i alpha_it <= 1' (for the low-rank mixer "
              "Q_t = sum_{i=1}^r alpha_it u_it u_it^T with unit u_it).",
    hypotheses="Q orthogonal, or ||Q||_2 < 1, or Q = sum_{i<=r} alpha_i u_i u_i^T with sum alpha_i <= 1.",
    conclusion="||I - Q||_2 < 1.",
    verdict="holds-as-corrected",
    evidence="Counterexamples: Q = -1 (orthogonal, N = 1) gives I - Q = 2; Q = 0 (contractive) gives I - Q = 1; the "
             "low-rank sum with r < N is singular, so I - Q has eigenvalue 1 (e.g. N = 2, r = 1, alpha = 1/2, "
             "u = e1: I - Q = diag(1/2, 1)). Corrected statement (for symmetric Q: contractive iff spec(Q) in (0, 2); "
             "for a planar rotation R(theta): iff cos(theta) > 1/2) checked exactly.",
    counterexample={"orthogonal": {"Q": [["-1"]], "I_minus_Q": [["2"]]},
                    "contractive": {"Q": [["0"]], "I_minus_Q": [["1"]]},
                    "low_rank_sum": {"N": 2, "alpha": "1/2", "u": ["1", "0"], "I_minus_Q": [["1/2", "0"], ["0", "1"]]}},
    corrected="For symmetric Q, ||I - Q||_2 < 1 iff Q and 2I - Q are positive definite (spectrum in (0, 2)), so a sum "
              "of r < N rank-one terms never qualifies; a rotation R(theta) qualifies iff cos(theta) > 1/2 "
              "(|theta| < pi/3); an orthogonal Q with eigenvalue -1 never does.")
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


@statement(
    id="003:claim-D.3.2.negative-eigenvalues.capability", paper=PAPER, kind="claim",
    statement="(The second reading of App. D.3.2) 'Q_t also has negative eigenvalues as in (Grazzi et al., 2024)': "
              "mixers of eq. (10) can have negative eigenvalues.",
    hypotheses="Q = prod_{i<=r} (I - 2 alpha_i u_i u_i^T / u_i^T u_i), 0 < alpha_i < 1.",
    conclusion="Some such Q has a negative real eigenvalue.",
    verdict="holds",
    evidence="Exact witness: N = 1, r = 1, alpha = 3/4 gives Q = -1/2; a search over eq. (10) mixers (N, r <= 3, "
             "alpha = k/8) decides the sign of the eigenvalues exactly (Sturm count of the characteristic "
             "polynomial). The capability needs some alpha_i > 1/2 or r >= 2: perturbed to r = 1 and alpha <= 1/2 "
             "(eigenvalue 1 - 2 alpha >= 0) no witness exists and the check reports falsified. The conjunction "
             "with contractivity is 003:claim-D.3.2.negative-eigenvalues (falsified).",
    perturb={"alpha_hi": 4, "r_max": 1})
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
