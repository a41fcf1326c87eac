"""Paper 003: 003:theorem-2.1, 003:theorem-2.2.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from ...model.linalg import exact_matvec
from .._exact import dot, exact_identity as eye, exact_matmul as mm, find_or_none, fstr, is_pd, is_psd, mstr
from .._exact import msub as sub, norm2_lt1, solve
from .._exact import transpose as tr
from ..registry import CheckResult, entry
from ._common import _mat_strategy, _rat_strategy
from ..paper_000._common import charpoly
from ..paper_000.proposition_1 import schur_cohn_inside


# =========================================================================== Theorem 2.1
def lipschitz_operator(lams: list, P: list, T: int) -> list:
    """The linear part of h -> f_theta(x, h) of Theorem 2.1 over T steps: block (t, tau) = Lambda^{t-tau}(I-Lambda)P
    for tau <= t (P = I - Q). f is affine in h, so its Lipschitz constant (sequence 2-norm) is ||L||_2."""
    d = len(lams)
    n = T * d
    L = [[F(0)] * n for _ in range(n)]
    for t in range(T):
        for tau in range(t + 1):
            for i in range(d):
                c = F(lams[i]) ** (t - tau) * (1 - F(lams[i]))
                if c:
                    for j in range(d):
                        L[t * d + i][tau * d + j] = c * P[i][j]
    return L


def lipschitz_lt1(lams: list, P: list, T: int) -> tuple[bool, bool]:
    """(whole-sequence contraction, per-step contraction as in the proof: ||f_t(h) - f_t(h')|| < ||h - h'||)."""
    L = lipschitz_operator(lams, P, T)
    d = len(lams)
    seq = norm2_lt1(L)
    per = True
    for t in range(T):
        R = [row[: (t + 1) * d] for row in L[t * d:(t + 1) * d]]
        if not is_pd(sub(eye(d), mm(R, tr(R)))):
            per = False
            break
    return seq, per


def _thm21_strategy(lam_lo: int):
    from hypothesis import strategies as st
    return st.tuples(st.integers(1, 2), st.integers(1, 3)).flatmap(
        lambda dt: st.tuples(st.just(dt[1]), st.lists(_rat_strategy(lam_lo, 7, 8), min_size=dt[0], max_size=dt[0]),
                             _mat_strategy(dt[0], -7, 7, 8)))


def _thm21_search(profile: str, lam_lo: int, shrink: bool = False):
    def bad(args):
        T, lams, P = args
        if not norm2_lt1(P):           # hypothesis ||I - Q||_2 < 1 (||Lambda||_2 < 1 holds by construction)
            return False
        seq, per = lipschitz_lt1(lams, P, T)
        return not (seq and per)
    return find_or_none(_thm21_strategy(lam_lo), bad, profile, 120, 2000, shrink)


THM21_CX = {"d": 1, "T": 1, "Lambda": "-1/2", "Q": "1/4"}


@entry("003:theorem-2.1", perturb={"corrected_lam_lo": -7})
def check_theorem_2_1(profile: str, corrected_lam_lo: int = 0) -> CheckResult:
    """``corrected_lam_lo``: the corrected statement searched with Lambda entries >= corrected_lam_lo / 8 (0; the
    perturbation -7 readmits negative entries)."""
    # 1. the recorded hand-checkable counterexample, exactly
    lam, Q = F(-1, 2), F(1, 4)
    P = [[1 - Q]]
    assert abs(lam) < 1 and norm2_lt1(P)
    lip = (1 - lam) * (1 - Q)
    seq, per = lipschitz_lt1([lam], P, 1)
    # error of the fixed-point iteration (eq. 4) after 10 iterations, exactly
    err = F(1)
    for _ in range(10):
        err = lip * err
    # 2. hypothesis search on the printed statement and on the corrected one
    cx_printed = _thm21_search(profile, -7, shrink=True)   # this shrink is quick (d = 1, T = 1 is found early)
    cx_corr = _thm21_search(profile, corrected_lam_lo)
    details = {"recorded_counterexample_lipschitz": fstr(lip), "iteration_error_growth_after_10": fstr(err),
               "shrunk_counterexample": None if cx_printed is None else
               {"T": cx_printed[0], "Lambda": [fstr(x) for x in cx_printed[1]], "I_minus_Q": mstr(cx_printed[2])}}
    printed_fails = (not seq and not per and lip > 1) or cx_printed is not None
    if not printed_fails:
        return CheckResult("holds", "no counterexample found to the printed statement", details=details)
    if cx_corr is not None:
        return CheckResult("falsified", "printed and corrected statements both fail",
                           counterexample={"T": cx_corr[0], "Lambda": [fstr(x) for x in cx_corr[1]],
                                           "I_minus_Q": mstr(cx_corr[2])}, details=details)
    n = 120 if profile == "quick" else 2000
    return CheckResult("holds-as-corrected",
                       f"printed statement falsified (Lambda=-1/2, Q=1/4: Lipschitz 9/8); corrected statement "
                       f"(0 <= Lambda < I) survives {n} exact examples",
                       counterexample=THM21_CX,
                       corrected="0 <= lambda_i < 1 and ||I - Q||_2 < 1 imply Lipschitz <= ||I - Q||_2 < 1",
                       details=details)


# =========================================================================== Theorem 2.2
def _descent_ok(J: list, delta: list) -> tuple[bool, dict]:
    """Theorem 2.2's conclusion for one (J, delta): with J_x = J_h = J, the gradient at the fixed point
    g = J^T delta and the true gradient g* = (J*)^T delta, J* = (I - J)^{-1} J (App. B, eq. 7), satisfy
    <g, g*> >= 0, and > 0 whenever g* != 0."""
    d = len(J)
    Jstar = solve(sub(eye(d), J), J)
    g = exact_matvec(tr(J), delta)
    gs = exact_matvec(tr(Jstar), delta)
    ip = dot(g, gs)
    ok = ip > 0 or (ip == 0 and all(x == 0 for x in gs))
    return ok, {"J": mstr(J), "delta": [fstr(x) for x in delta], "g": [fstr(x) for x in g],
                "g_star": [fstr(x) for x in gs], "inner_product": fstr(ip)}


def descent_form(J: list) -> list:
    """The symmetric matrix S with ``<g, g*> = delta^T S delta`` for all delta (g = J^T delta, g* = (J*)^T delta,
    J* = (I - J)^{-1} J): S is the symmetric part of ``J J^T (I - J)^{-T}``. The conclusion of Theorem 2.2 for
    every delta at once is ``S`` positive semidefinite (decided exactly)."""
    d = len(J)
    inv_t = tr(solve(sub(eye(d), J), eye(d)))
    M = mm(mm(J, tr(J)), inv_t)
    return [[(M[i][j] + M[j][i]) / 2 for j in range(d)] for i in range(d)]


def spectral_radius_lt1(J: list) -> bool:
    """Every eigenvalue of J lies in the open unit disk (exact: Schur-Cohn on the characteristic polynomial)."""
    return schur_cohn_inside(charpoly(J))


@entry("003:theorem-2.2", perturb={"hypothesis": "spectral-radius"})
def check_theorem_2_2(profile: str, hypothesis: str = "2-norm") -> CheckResult:
    """Exact search over J (d <= 3, entries k/8 in [-2, 2]) satisfying the hypothesis (``2-norm``: ||J||_2 < 1 as
    printed; ``spectral-radius``: only rho(J) < 1, the perturbation); for each J the conclusion for all delta is
    decided at once (:func:`descent_form` PSD), the strict part on sampled delta."""
    from hypothesis import strategies as st
    strat = st.integers(1, 3).flatmap(lambda d: st.tuples(
        _mat_strategy(d, -16, 16, 8), st.lists(st.integers(-3, 3).map(F), min_size=d, max_size=d)))
    admissible = norm2_lt1 if hypothesis == "2-norm" else spectral_radius_lt1

    def bad(args):
        J, delta = args
        if not admissible(J):
            return False
        return not is_psd(descent_form(J)) or not _descent_ok(J, delta)[0]

    cx = find_or_none(strat, bad, profile, 120, 2000)
    if cx is not None:
        J = cx[0]
        return CheckResult("falsified", f"descent fails for some delta ({hypothesis} < 1)",
                           counterexample={"J": mstr(J), "descent_form": mstr(descent_form(J)),
                                           "delta": [fstr(x) for x in cx[1]]})
    # necessity of the 2-norm hypothesis, on the recorded witness: J (eigenvalues +-1/2, ||J||_2 > 1) and delta with
    # J^T delta = (1, 3): <g, g*> < 0.
    Jw = [[F(1), F(1, 2)], [F(-3, 2), F(-1)]]
    dw = [r[0] for r in solve(tr(Jw), [[F(1)], [F(3)]])]
    ok_w, info_w = _descent_ok(Jw, dw)
    info_w["spectral_radius"] = "1/2"
    info_w["norm_lt_1"] = norm2_lt1(Jw)
    weak = None if ok_w else info_w
    n = 120 if profile == "quick" else 2000
    return CheckResult("holds", f"{n} exact examples (d <= 3, ||J||_2 < 1): the descent form J J^T (I - J)^-T has a "
                                f"PSD symmetric part (every delta at once)",
                       details={"spectral_radius_only_counterexample": weak})
