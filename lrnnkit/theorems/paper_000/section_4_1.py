"""Paper 000, Section 4.1 and the remarks around Proposition 1 / Theorem 4: 000:equation-2,
000:section-4.1-triangular, 000:zero-matrix-factors.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np

from .._exact import basis_vector, gh, mm, prod, rank
from ..registry import CheckResult, entry
from .theorem_1_2 import BF16, TOY8, cast_model_states, separates


def counter_parity_failure(fmt, mode: str = "nearest-even", limit: int = 1 << 12) -> int | None:
    """Eq. (2) run in a binary format with the cast of every state (000, App. A.3): h_t = cast(h_{t-1} + 1) on the
    word 1^t, y_t = h_t mod 2. Returns the first t with y_t != t mod 2 (None if none up to ``limit``)."""
    h = F(0)
    for t in range(1, limit + 1):
        h = fmt.cast(h + 1, mode)
        if h.denominator != 1 or h.numerator % 2 != t % 2:
            return t
    return None


@entry("000:equation-2", perturb={"a": 2})
def check_equation_2(profile: str = "quick", a: int = 1) -> CheckResult:
    L = 12 if profile == "quick" else 16
    for n in range(1, L + 1):
        for w in itertools.product((0, 1), repeat=n):
            h = 0
            for t, x in enumerate(w, 1):
                h = a * h + x                       # A(x) = a (1 in eq. 2), B(x) = x
                if h % 2 != sum(w[:t]) % 2 or h > t or h.bit_length() > t.bit_length():
                    return CheckResult("falsified", "eq. (2) gives a wrong parity", counterexample=list(w[:t]))
    fails = {"bf16": counter_parity_failure(BF16), "toy8": counter_parity_failure(TOY8)}
    if fails != {"bf16": 2 ** 8 + 1, "toy8": 2 ** 4 + 1}:
        return CheckResult("falsified", f"finite-precision failure not at 2^p + 1: {fails}", counterexample=fails)
    return CheckResult("holds", f"exact on all words of length <= {L}; in finite precision the counter first gives "
                                f"the wrong parity at t = {fails} (2^p + 1)", details=fails)


def triangular_product_ok(mats: list) -> bool:
    """The product of upper-triangular matrices is upper triangular and its diagonal is the product of the
    diagonals (exact)."""
    n = len(mats[0])
    P = mats[0]
    for M in mats[1:]:
        P = mm(M, P)
    diag = [F(1)] * n
    for M in mats:
        diag = [d * M[i][i] for i, d in enumerate(diag)]
    return all(P[i][j] == 0 for i in range(n) for j in range(i)) and [P[i][i] for i in range(n)] == diag


def _triangular_lrnns(n_max: int):
    """Upper-triangular one-layer LRNNs A(1), B, H0 on small grids (diagonal in {-1, -1/2, 0, 1/2, 1})."""
    diag = [F(-1), F(-1, 2), F(0), F(1, 2), F(1)]
    off = [F(0), F(1), F(-3, 2)]
    vec = [F(0), F(1), 1 + F(1, 2 ** 7), F(1, 2 ** 8)]
    for n in range(1, n_max + 1):
        for d in itertools.product(diag, repeat=n):
            for o in itertools.product(off, repeat=n * (n - 1) // 2):
                it = iter(o)
                A = tuple(tuple(d[i] if i == j else (next(it) if j > i else F(0)) for j in range(n))
                          for i in range(n))
                for H0 in itertools.product(vec, repeat=n):
                    yield A, (F(0),) * n, H0
                    yield A, tuple(F(1) if i == 0 else F(0) for i in range(n)), H0


@entry("000:section-4.1-triangular", perturb={"fill_below": True})
def check_triangular(profile: str = "quick", fill_below: bool = False) -> CheckResult:
    # random rational upper-triangular products (a seeded stream: hypothesis' generation of Fraction matrices
    # costs ~0.1 s per example here, too slow for the quick profile)
    rng = np.random.default_rng(2)
    N = 200 if profile == "quick" else 2000
    n = 3
    for _ in range(N):
        mats = [tuple(tuple(F(int(rng.integers(-6, 7)), 6) if i == j else
                            (F(int(rng.integers(-9, 10)), int(rng.integers(1, 5))) if j > i or fill_below else F(0))
                            for j in range(n)) for i in range(n)) for _ in range(int(rng.integers(1, 5)))]
        if not triangular_product_ok(mats):
            return CheckResult("falsified", "a product of triangular matrices is not triangular",
                               counterexample=[[[str(x) for x in r] for r in M] for M in mats])
    # quick: every 29th grid point on a shorter horizon (the full grid, K = 240, takes minutes: deep)
    K, stride = (240, 1) if profile == "deep" else (120, 29)
    count, parity_solver = 0, None
    for A, B, H0 in itertools.islice(_triangular_lrnns(2), 0, None, stride):
        states = cast_model_states(A, B, H0, K, TOY8, "nearest-even")
        count += 1
        if separates(states, 3, K // 2):
            return CheckResult("falsified", "a triangular LRNN counts modulo 3 in the toy format",
                               counterexample={"A": [[str(x) for x in r] for r in A], "B": [str(x) for x in B],
                                               "H0": [str(x) for x in H0]})
        if parity_solver is None and separates(states, 2, K // 2) and len(set(states[K // 2:])) == 2:
            parity_solver = {"A": [[str(x) for x in r] for r in A], "H0": [str(x) for x in H0]}
    if parity_solver is None:
        return CheckResult("open", "the grid contains no parity solver: the search would have no power")
    return CheckResult("holds", f"triangular products stay triangular ({N} exact cases); none of {count} triangular "
                                "one-layer LRNNs counts modulo 3 in the toy format (a parity solver is among them)",
                       details={"parity_solver": parity_solver})


@entry("000:zero-matrix-factors", perturb={"beta": F(1, 2)})
def check_zero_matrix(profile: str = "quick", beta=1) -> CheckResult:
    for n in range(1, 7):
        Z = prod([gh(beta, basis_vector(i, n)) for i in range(n)], n)
        if any(x != 0 for r in Z for x in r):
            return CheckResult("falsified", f"prod (I - e_i e_i^T) != 0 for n = {n}", counterexample={"n": n})
        for k in range(1, n):
            if rank(prod([gh(1, basis_vector(i, n)) for i in range(k)], n)) != n - k:
                return CheckResult("falsified", f"rank bound not attained at n = {n}, k = {k}",
                                   counterexample={"n": n, "k": k})
    rng = np.random.default_rng(3)            # seeded stream of rational factors (see check_triangular)
    N = 150 if profile == "quick" else 1500
    for _ in range(N):
        n = int(rng.integers(2, 5))
        fac = [(F(int(rng.integers(-18, 19)), 6), tuple(F(int(rng.integers(-6, 7)), int(rng.integers(1, 4)))
                                                       for _ in range(n))) for _ in range(int(rng.integers(1, n)))]
        fac = [(b, v) for b, v in fac if any(v)]
        if fac and rank(prod([gh(b, v) for b, v in fac], n)) < n - len(fac):
            return CheckResult("falsified", "a product of k < n GH matrices has rank < n - k",
                               counterexample={"n": n, "factors": [[str(b), [str(x) for x in v]] for b, v in fac]})
    return CheckResult("holds", f"prod_i (I - e_i e_i^T) = 0 for n <= 6; products of k < n GH factors keep rank "
                                f">= n - k ({N} exact cases), attained")
