"""Paper 003: 003:equation-3, 003:appendix-B.equation-7.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from ...model.linalg import exact_matvec
from .._exact import det, exact_identity as eye, exact_matmul as mm, find_or_none, is_pd, mstr
from .._exact import madd_list as add, mscale_list as scal, msub as sub, norm2_lt1, solve
from .._exact import transpose as tr
from ..registry import CheckResult, entry
from ._common import _mat_strategy


# =========================================================================== Section 1, eqs. (2)-(3)
def _dense_states(Lams, Qs, Bs, xs, h0=None):
    """Dense RNN (eq. 2): Q_t h_t = Lambda_t h_{t-1} + Q_t B_t x_t (solved exactly)."""
    d = len(Lams[0])
    h = [F(0)] * d if h0 is None else h0
    out = []
    for Lam, Q, B, x in zip(Lams, Qs, Bs, xs):
        Bx = exact_matvec(B, x)
        QBx = exact_matvec(Q, Bx)
        rhs = [Lam[i] * h[i] + QBx[i] for i in range(d)]
        sol = solve(Q, [[v] for v in rhs])
        h = [row[0] for row in sol]
        out.append(h)
    return out


def _diag_rnn(Lams, Qs, Bs, xs, hs):
    """The diagonal RNN f(x, h) of eq. 3 applied to a given sequence h (f_{-1} = 0)."""
    d = len(Lams[0])
    f = [F(0)] * d
    out = []
    for Lam, Q, B, x, h in zip(Lams, Qs, Bs, xs, hs):
        Bx = exact_matvec(B, x)
        QBx = exact_matvec(Q, Bx)
        IQh = exact_matvec(sub(eye(d), Q), h)
        f = [Lam[i] * f[i] + QBx[i] + IQh[i] for i in range(d)]
        out.append(f)
    return out


@entry("003:equation-3", perturb={"reverse_inputs": True})
def check_equation_3(profile: str, reverse_inputs: bool = False) -> CheckResult:
    """``reverse_inputs`` (the perturbation) feeds the diagonal RNN the inputs in reverse order."""
    from hypothesis import strategies as st

    def strat():
        return st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(0, 2**31 - 1))

    def bad(args):
        d, T, seed = args
        rng = np.random.default_rng(seed)
        rnd = lambda *s: [[F(int(v), 4) for v in row] for row in rng.integers(-6, 7, size=s)]  # noqa: E731
        Lams = [[F(int(v), 8) for v in rng.integers(-7, 8, size=d)] for _ in range(T)]
        Qs = []
        for _ in range(T):
            Q = rnd(d, d)
            while det(Q) == 0:
                Q = rnd(d, d)
            Qs.append(Q)
        Bs = [rnd(d, d) for _ in range(T)]
        xs = [[F(int(v)) for v in rng.integers(-3, 4, size=d)] for _ in range(T)]
        hs = _dense_states(Lams, Qs, Bs, xs)
        return _diag_rnn(Lams, Qs, Bs, xs[::-1] if reverse_inputs else xs, hs) != hs

    cx = find_or_none(strat(), bad, profile, 30, 500)
    if cx is not None:
        return CheckResult("falsified", "fixed point differs from the dense RNN", counterexample=list(cx))
    n = 30 if profile == "quick" else 500
    return CheckResult("holds", f"{n} random exact instances (d <= 3, T <= 5): f(x, h*) = h* exactly")


# =========================================================================== Appendix B, eq. (7)
@entry("003:appendix-B.equation-7", perturb={"norm_bound": 2})
def check_appendix_B_eq7(profile: str, norm_bound=1) -> CheckResult:
    """``norm_bound``: the hypothesis ||J_h||_2 < norm_bound (1; the perturbation 2 admits expanding J_h)."""
    from hypothesis import strategies as st
    strat = st.integers(1, 3).flatmap(lambda d: st.tuples(_mat_strategy(d, -7, 7, 8), _mat_strategy(d, -8, 8, 4)))

    def bad(args):
        Jh, Jx = args
        if not norm2_lt1(scal(F(1, norm_bound), Jh)):
            return False
        d = len(Jh)
        Js = solve(sub(eye(d), Jh), Jx)
        if Js is None or add(Jx, mm(Jh, Js)) != Js:
            return True
        M = sub(eye(d), Jh)
        if not is_pd(scal(F(1, 2), add(M, tr(M)))):
            return True
        A = np.array([[float(x) for x in r] for r in Jh])
        B = np.array([[float(x) for x in r] for r in Jx])
        S = np.array([[float(x) for x in r] for r in Js])
        X = B.copy()
        for _ in range(60):
            X = B + A @ X
        # X_l - J* = J_h^{l+1} (B - J*) ... bounded by ||J_h||^{61} ||J*||; tolerance: that bound + 1e-12 float slack
        bound = np.linalg.norm(A, 2) ** 61 * (np.linalg.norm(S, 2) + np.linalg.norm(B, 2)) + 1e-12
        return float(np.linalg.norm(X - S, 2)) > bound

    cx = find_or_none(strat, bad, profile, 100, 1500)
    if cx is not None:
        return CheckResult("falsified", "eq. 7 fails", counterexample={"J_h": mstr(cx[0]), "J_x": mstr(cx[1])})
    return CheckResult("holds", "eq. 7, its fixed-point equation and the positive symmetric part hold on every example")
