"""Paper 001: 001:claim-rank, 001:claim-norm-eigenvalues, 001:claim-reset, 001:equation-unrolled, 001:figure-4.

See the package docstring (lrnnkit/theorems/paper_001/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ...exact import cos2pi, sin2pi
from .._exact import (_fac_json, _st, basis_vector, eye, gh, gh_product, householder, is_psd, madd, mm, mscale, prod,
    rank, search, search_norm_above_1, st_fraction, st_gh_product, st_unit, tr)
from ..paper_000 import rot
from ..registry import CheckResult, entry


def deltaproduct_A(factors, n: int) -> tuple:
    """A(x) for one token: the step j = 1 is applied first, so its factor is rightmost."""
    return prod([gh(b, v) for b, v in reversed(factors)], n)


@entry("001:claim-rank", perturb={"slack": -1})
def check_rank(profile: str = "quick", slack: int = 0) -> CheckResult:
    N = 60 if profile == "quick" else 600
    for n in (2, 3, 4):
        def bad(facs, n=n):
            A = deltaproduct_A(facs, n)
            D = madd(eye(n), A, -1)
            keys = [v for _, v in facs]
            return rank(D) > len(facs) + slack or rank(list(tr(D)) + keys) > rank(keys)
        found = search(st_gh_product(n, 4, 0, 2), bad, N)
        if found is not None:
            return CheckResult("falsified", "rank bound fails", counterexample=_fac_json(found))
    e = [basis_vector(j, 4) for j in range(4)]
    attained = rank(madd(eye(4), deltaproduct_A([(F(1), e[0]), (F(2), e[1]), (F(1, 2), e[2])], 4), -1)) == 3
    if not attained:
        return CheckResult("falsified", "bound not attained for orthogonal keys")
    return CheckResult("holds", f"rank(I - A) <= n_h on {N} tokens per n = 2, 3, 4; attained for orthogonal keys")


@entry("001:claim-norm-eigenvalues", perturb={"beta_hi": 3})
def check_norm(profile: str = "quick", beta_hi=2) -> CheckResult:
    found = search_norm_above_1(deltaproduct_A, (2, 3), beta_hi, 80 if profile == "quick" else 800)
    if found is not None:
        return CheckResult("falsified", "||A|| > 1", counterexample=_fac_json(found[1]))
    e1 = (F(1), F(0))
    S = madd(eye(2), mscale(mm(((e1[0],), (e1[1],)), ((e1[0], e1[1]),)), 4), -1)
    if is_psd(madd(eye(2), mm(tr(S), S), -1)):
        return CheckResult("open", "direct formulation example has norm <= 1")
    return CheckResult("holds", f"||A|| <= 1 on {80 if profile == 'quick' else 800} tokens per n = 2, 3 (exact); "
                                "I - 4 e1 e1^T has norm 3")


@entry("001:claim-reset", perturb={"slack": 1})
def check_reset(profile: str = "quick", slack: int = 0) -> CheckResult:
    N = 60 if profile == "quick" else 600
    for n in (2, 3, 4):
        def bad(facs, n=n):
            return rank(gh_product(facs, n)) < n - len(facs) + slack
        found = search(st_gh_product(n, 4, 0, 2), bad, N)
        if found is not None:
            return CheckResult("falsified", "rank dropped faster than one per factor", counterexample=_fac_json(found))

    def reset_rank(n, nh, tokens, exact):
        """Rank of the product of the first `tokens` reset tokens (token t carries I - e_i e_i^T for
        i = t*nh .. t*nh + nh - 1, padded with beta = 0). Exact matrices for n <= 8; for n = 128 the factors are
        diagonal 0/1 matrices, so the product is the diagonal of surviving coordinates."""
        used = min(n, tokens * nh)
        if exact:
            facs = [(F(1), basis_vector(i, n)) for i in range(used)]
            facs += [(F(0), basis_vector(0, n))] * (tokens * nh - used)
            return rank(gh_product(facs, n)) if facs else n
        return n - used
    for n in range(1, 9):
        for nh in range(1, 5):
            T = -(-n // nh)
            if reset_rank(n, nh, T, True) != 0 or reset_rank(n, nh, T - 1, True) == 0:
                return CheckResult("falsified", "reset construction", counterexample={"n": n, "n_h": nh})
    if -(-128 // 3) != 43 or reset_rank(128, 3, 43, False) != 0 or reset_rank(128, 3, 42, False) != 2:
        return CheckResult("falsified", "n = 128, n_h = 3", counterexample={"n": 128, "n_h": 3})
    return CheckResult("holds", "rank(product of k GH) >= n - k on random products; projection tokens reset in "
                                "exactly ceil(n / n_h) tokens (n <= 8, and 43 for n = 128, n_h = 3)")


@entry("001:equation-unrolled", perturb={"reading": "ascending"})
def check_unrolled(profile: str = "quick", reading: str = "descending") -> CheckResult:
    st = _st()
    N = 40 if profile == "quick" else 400

    def run(args, reading="descending"):
        n, d, toks, g = args
        H = tuple(tuple(F(i + 2 * j + 1, 3) for j in range(d)) for i in range(n))
        seq = H
        for (b, k, v) in toks:                       # sequential steps (first step with the gate)
            G = gh(b, k)
            seq = tuple(tuple(x + b * k[r] * v[c] for c, x in enumerate(row)) for r, row in enumerate(mm(G, seq)))
        seq_g = tuple(tuple(x for x in r) for r in H)
        for idx, (b, k, v) in enumerate(toks):       # gated interleaved: gate g on the first sub-step only
            G = gh(b, k)
            gg = g if idx == 0 else F(1)
            seq_g = tuple(tuple(gg * x + b * k[r] * v[c] for c, x in enumerate(row))
                          for r, row in enumerate(mm(G, seq_g)))
        facs = [gh(b, k) for b, k, _ in toks]
        A = prod(facs[::-1], n) if reading == "descending" else prod(facs, n)
        Bm = tuple(tuple(F(0) for _ in range(d)) for _ in range(n))
        for j, (b, k, v) in enumerate(toks):
            Pj = prod(facs[j + 1:][::-1], n) if reading == "descending" else prod(facs[j + 1:], n)
            term = mm(Pj, tuple(tuple(b * k[r] * v[c] for c in range(d)) for r in range(n)))
            Bm = madd(Bm, term)
        closed = madd(mm(A, H), Bm)
        gated = madd(mm(mscale(A, g), H), Bm)
        return seq, closed, seq_g, gated

    def strat(n):
        return st.tuples(st.just(n), st.integers(1, 2),
                         st.lists(st.tuples(st_fraction(0, 2), st_unit(n),
                                            st.lists(st.fractions(-2, 2, max_denominator=4), min_size=2,
                                                     max_size=2)), min_size=1, max_size=3),
                         st_fraction(0, 1))

    def fix(args):
        n, d, toks, g = args
        return (n, d, [(b, k, tuple(v[:d])) for b, k, v in toks], g)
    for n in (2, 3):
        found = search(strat(n), lambda a: (lambda r: r[0] != r[1] or r[2] != r[3])(run(fix(a), reading)), N)
        if found is not None:
            return CheckResult("falsified", "closed form / interleaving mismatch", counterexample=repr(found))
    # the left-to-right reading on a fixed two-step token with non-commuting factors
    tok = (2, 1, [(F(1), (F(1), F(0)), (F(1),)), (F(1), (F(3, 5), F(4, 5)), (F(0),))], F(1))
    seq, closed_asc = run(tok, "ascending")[:2]
    asc_fails = seq != closed_asc
    return CheckResult("holds", f"sequential == closed form == gated interleaving on {N} tokens per n = 2, 3 "
                                f"(descending product); ascending reading fails on a 2-step token: {asc_fails}",
                       details={"ascending_reading_counterexample": repr(tok) if asc_fails else None})


@entry("001:figure-4", perturb={"factor": 1})
def check_figure_4(profile: str = "quick", factor: int = 2) -> CheckResult:
    N = 12 if profile == "quick" else 24             # angles k * 2 pi / N
    for a, b in itertools.product(range(N), repeat=2):
        n0 = (-sin2pi(a, N), cos2pi(a, N))           # normal of the line at angle 2 pi a / N
        n1 = (-sin2pi(b, N), cos2pi(b, N))
        H0 = householder(2, n0)
        H1 = householder(2, n1)
        if mm(H1, H0) != rot(factor * (b - a), N):
            return CheckResult("falsified", "not a rotation by twice the angle", counterexample={"a": a, "b": b})
        if b == (a + 1) % N:
            H03 = tuple(tuple(H0[i][j] if i < 2 and j < 2 else F(int(i == j)) for j in range(3)) for i in range(3))
            H13 = tuple(tuple(H1[i][j] if i < 2 and j < 2 else F(int(i == j)) for j in range(3)) for i in range(3))
            R3 = mm(H13, H03)
            if R3[2] != (F(0), F(0), F(1)) or tuple(r[:2] for r in R3[:2]) != rot(2 * (b - a), N):
                return CheckResult("falsified", "3-D block check", counterexample={"a": a, "b": b})
    return CheckResult("holds", f"H(b) H(a) = R(2 (b - a)) for all line angles in multiples of 2 pi/{N} (exact)")
