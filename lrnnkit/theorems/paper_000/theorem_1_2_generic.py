"""Paper 000, Theorems 1-2 for generic casts: 000:theorem-1.generic-cast, 000:theorem-2.generic-cast.

The recorded counterexamples to Theorems 1-2 (000:theorem-1, 000:theorem-2) put the limit of the exact state
sequence exactly on a rounding midpoint, approached from both sides. These entries state and check the theorems for
casts that are continuous at those limit points, the generic case.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import random
from fractions import Fraction as F

from .._exact import _mat_json, block_diag, mm, mv, solve
from ..registry import CheckResult, entry
from .theorem_1_2 import BF16, MODES, T1_A1, T1_H0, T2_A1, T2_H0, TOY8, cast_model_states, separates, tail_monotone

_EPS = F(1, 2 ** 60)      # far below every spacing of the formats used (bf16 subnormals: 2^-133 is not used here)
_REAL = [F(-3, 4), F(-1, 2), F(-1, 4), F(0), F(1, 4), F(1, 2), F(3, 4)]
#: x^2 + a x + b with complex roots of modulus sqrt(b) < 1 (angles 2 pi/3, pi/2, pi/3, 3 pi/4)
_COMPLEX = [(F(1, 2), F(1, 4)), (F(0), F(1, 4)), (F(-1, 2), F(1, 4)), (F(1), F(1, 2))]


def cast_continuous_at(fmt, mode: str, x: F) -> bool:
    """The cast is constant on a neighbourhood of x (x is not a rounding boundary of the mode)."""
    c = fmt.cast(x, mode)
    return fmt.cast(x - _EPS, mode) == c == fmt.cast(x + _EPS, mode)


def generic_lrnn(rng: random.Random, units: list, n: int):
    """A = P J P^-1 with J block diagonal: one semisimple unit eigenvalue (drawn from ``units``), the rest of modulus
    < 1 (real, a real Jordan block, or a complex pair as a companion block). Returns (A, P, J, Pinv, unit positions
    with their eigenvalue)."""
    blocks, unit_pos, size = [], [], 0
    u = rng.choice(units)
    blocks.append([[u]])
    unit_pos.append((0, u))
    size = 1
    while size < n:
        kind = rng.randrange(4) if n - size >= 2 else 0
        if kind == 0:
            lam = rng.choice(_REAL + units)
            if lam in units:
                unit_pos.append((size, lam))
            blocks.append([[lam]])
            size += 1
        elif kind == 1:
            lam = rng.choice([x for x in _REAL if x != 0])
            blocks.append([[lam, F(1)], [F(0), lam]])
            size += 2
        else:
            a, b = rng.choice(_COMPLEX)
            blocks.append([[F(0), -b], [F(1), -a]])
            size += 2
    J = tuple(tuple(F(v) for v in r) for r in block_diag(blocks))
    for _ in range(50):
        P = tuple(tuple(F(rng.randrange(-2, 3)) for _ in range(n)) for _ in range(n))
        Pinv = solve([list(r) for r in P], [[F(int(i == j)) for j in range(n)] for i in range(n)])
        if Pinv is not None:
            break
    else:
        P = Pinv = tuple(tuple(F(int(i == j)) for j in range(n)) for i in range(n))
    Pinv = tuple(tuple(r) for r in Pinv)
    return mm(mm(P, J), Pinv), P, J, Pinv, unit_pos


def limit_points(P, J, Pinv, unit_pos, v, period: int) -> list:
    """The limits of the subsequences (A^{period k + r} v)_k, r = 0..period-1, exactly: J^{period k + r} tends to
    E J^r with E the 0/1 diagonal at the unit eigenvalues (semisimple, period 2 covers -1)."""
    n = len(J)
    out = []
    for r in range(period):
        E = [[F(0)] * n for _ in range(n)]
        for p, lam in unit_pos:
            E[p][p] = lam ** r
        out.append(mv(mm(mm(P, tuple(map(tuple, E))), Pinv), v))
    return out


_GRID = [F(0), F(1), F(-1), F(3, 2), F(1, 16), 1 + F(1, 16), F(17, 16), F(-5, 4), F(9, 8), F(1, 32), 1 + F(1, 8),
         F(1, 8)]


def generic_search(units: list, period: int, m: int, profile: str):
    """Random one-layer LRNNs (n = 2, 3) whose unit-modulus eigenvalues are ``units`` (semisimple) and all others of
    modulus < 1, in the 8-bit toy format, every rounding mode. Instances whose cast is discontinuous at a limit
    point of A^k H0 or A^k B (per residue mod ``period``) are excluded (counted). A counterexample must recognize
    (1^m)*: residue classes mod ``period`` not monotone on [2K, 4K] and separating m | k from the rest there.
    Returns (counterexample or None, tried, excluded, K)."""
    rng = random.Random(1234 + period)
    N, K = (200, 64) if profile == "quick" else (2000, 160)
    tried = excluded = 0
    for _ in range(N):
        n = rng.choice((2, 3))
        A, P, J, Pinv, unit_pos = generic_lrnn(rng, units, n)
        H0 = tuple(rng.choice(_GRID) for _ in range(n))
        B = tuple(rng.choice(_GRID) for _ in range(n)) if rng.random() < 0.5 else (F(0),) * n
        mode = rng.choice(MODES)
        lims = limit_points(P, J, Pinv, unit_pos, H0, period) + limit_points(P, J, Pinv, unit_pos, B, period)
        if not all(cast_continuous_at(TOY8, mode, x) for L in lims for x in L):
            excluded += 1
            continue
        tried += 1
        states = cast_model_states(A, B, H0, K, TOY8, mode)
        if tail_monotone(states, period, K // 2):
            continue
        states = cast_model_states(A, B, H0, 4 * K, TOY8, mode)
        if not tail_monotone(states, period, 2 * K) and separates(states, m, 2 * K):
            return {"A": _mat_json(A), "B": [str(x) for x in B], "H0": [str(x) for x in H0], "mode": mode}, \
                tried, excluded, K
    return None, tried, excluded, K


def _controls() -> dict:
    """The recorded counterexamples are not generic (their limit is a bf16 midpoint), and a generic perturbation of
    Theorem 1's counterexample (H0_2 = 2^-8 + 2^-10, limit 1 + 3 2^-10) loses parity: its cast state is constant
    from some k on."""
    t1_limit = T1_H0[0] - T1_H0[1]                        # eigenvector (1, 1) of -1/2: limit (H0_1 - H0_2) e_1
    t2_limit = 1 + F(1, 2 ** 8)
    pert = (T1_H0[0], F(1, 2 ** 8) + F(1, 2 ** 10))
    # the second coordinate, (-1/2)^k (2^-8 + 2^-10), alternates in sign until it underflows (bf16 subnormals
    # reach 2^-133): the tail is taken after k = 300
    st = cast_model_states(T1_A1, (F(0), F(0)), pert, 400, BF16, "nearest-even")
    t2_states = cast_model_states(T2_A1, (F(0),) * 3, T2_H0, 60, BF16, "nearest-even")
    return {"t1_limit_is_boundary": not cast_continuous_at(BF16, "nearest-even", t1_limit),
            "t2_limit_is_boundary": not cast_continuous_at(BF16, "nearest-even", t2_limit)
            and t2_states[-1][0] in (1, 1 + F(1, 2 ** 7)),
            "perturbed_t1_constant_tail": len(set(st[300:])) == 1}


@entry("000:theorem-1.generic-cast", perturb={"units": (F(-1),)})
def check_theorem_1_generic(profile: str = "quick", units: tuple = (F(1),)) -> CheckResult:
    ctrl = _controls()
    if not (ctrl["t1_limit_is_boundary"] and ctrl["perturbed_t1_constant_tail"]):
        return CheckResult("open", f"controls failed: {ctrl}", details=ctrl)
    # power: the same search with the unit eigenvalue -1 (outside the hypothesis) must find a parity solver
    power, _, _, _ = generic_search([F(-1)], 1, 2, "quick")
    if power is None:
        return CheckResult("open", "the search finds no parity solver even with eigenvalue -1: it has no power")
    cx, tried, excluded, K = generic_search(list(units), 1, 2, profile)
    if cx is not None:
        return CheckResult("falsified", "a generic-cast LRNN with non-negative unit spectrum solves parity",
                           counterexample=cx)
    return CheckResult("holds", f"{tried} generic one-layer LRNNs ({excluded} non-generic draws skipped), K = {K} "
                                f"(re-run 4K): none recognizes (11)*; controls {ctrl}", details=ctrl)


@entry("000:theorem-2.generic-cast", perturb={"m": 2})
def check_theorem_2_generic(profile: str = "quick", m: int = 3) -> CheckResult:
    ctrl = _controls()
    if not ctrl["t2_limit_is_boundary"]:
        return CheckResult("open", f"control failed: {ctrl}", details=ctrl)
    cx, tried, excluded, K = generic_search([F(1), F(-1)], 2 if m == 3 else 1, m, profile)
    if cx is not None:
        return CheckResult("falsified", "a generic-cast LRNN with real unit spectrum counts modulo 3",
                           counterexample=cx)
    return CheckResult("holds", f"{tried} generic one-layer LRNNs ({excluded} non-generic draws skipped), K = {K} "
                                f"(re-run 4K): none recognizes (111)*; controls {ctrl}", details=ctrl)
