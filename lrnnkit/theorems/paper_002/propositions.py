"""Paper 002: 002:proposition-1, 002:proposition-2, 002:section-3.2.liquid-s4.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from .._exact import exact_matmul as mm, fstr, madd_list as add, mstr, solve
from ..registry import CheckResult, entry
from ._common import CHARS


# --------------------------------------------------------------------------- LRNN states of the four strings
def run_affine(mats: dict, adds: dict, z: list, word: str) -> list:
    """State of ``x_k = A(c_k) x_{k-1} + u(c_k)`` after ``word`` from ``x_0 = z`` (exact)."""
    x = [[v] for v in z]
    for c in word:
        x = add(mm(mats[c], x), [[v] for v in adds[c]])
    return [r[0] for r in x]


def four_strings(mats: dict, adds: dict, z: list) -> dict:
    return {w: run_affine(mats, adds, z, w) for w in ("0-1", "1-0", "0-0-1", "0-1-0")}


def consistent_on_proof_strings(mats: dict, adds: dict, z: list) -> bool:
    """The proofs' consistency requirement: x_{0-1} != x_{1-0} (values -1 != 1) and x_{0-0-1} = x_{0-1-0} (both -1)."""
    s = four_strings(mats, adds, z)
    return s["0-1"] != s["1-0"] and s["0-0-1"] == s["0-1-0"]


def _rand_vec(rng, d, lo=-4, hi=4, den=3):
    return [F(int(v), den) for v in rng.integers(lo, hi + 1, size=d)]


def _rand_mat(rng, d, lo=-4, hi=4, den=3):
    return [_rand_vec(rng, d, lo, hi, den) for _ in range(d)]


def dense_subtraction_model() -> tuple[dict, dict, list]:
    """A 2-state input-dependent affine LRNN (eq. 5 form) tracking (value, sign): digit d adds sign * d to the value
    (``A_d = [[1, d], [0, 1]]``), '-' sets the sign to -1 (``A_- = [[1, 0], [0, 0]]``, ``u_- = (0, -1)``);
    z = (0, 1). It meets the consistency requirement on the proofs' strings: the limitation is about diagonal
    (commuting) transitions."""
    mats = {"0": [[F(1), F(0)], [F(0), F(1)]], "1": [[F(1), F(1)], [F(0), F(1)]], "-": [[F(1), F(0)], [F(0), F(0)]]}
    adds = {"0": [F(0), F(0)], "1": [F(0), F(0)], "-": [F(0), F(-1)]}
    return mats, adds, [F(0), F(1)]


# =========================================================================== Propositions 1 and 2
def symbolic_gap(transitions: str):
    """``(x_{0-1} - x_{1-0}) - (x_{0-0-1} - x_{0-1-0})`` for the class of transitions, symbolically: for
    ``input-independent`` one non-commutative symbol A for every character (so the identity, if it vanishes, holds
    for matrices of every size), for ``diagonal`` commutative scalars a_c per coordinate (diagonal maps decouple),
    for ``dense`` non-commutative A_c per character. Zero means no model of the class is consistent."""
    import sympy
    nc = transitions != "diagonal"
    if transitions == "input-independent":
        A = sympy.Symbol("A", commutative=False)
        mats = {c: A for c in CHARS}
    else:
        mats = {c: sympy.Symbol(f"A{i}", commutative=not nc) for i, c in enumerate(CHARS)}
    adds = {c: sympy.Symbol(f"u{i}", commutative=not nc) for i, c in enumerate(CHARS)}
    z = sympy.Symbol("z", commutative=not nc)

    def run(w, x):
        for c in w:
            x = mats[c] * x + adds[c]
        return x
    return sympy.expand((run("0-1", z) - run("1-0", z)) - (run("0-0-1", z) - run("0-1-0", z)))


def consistent_witness(transitions: str, seed: int, d: int = 2):
    """An exact model of the class with x_{0-0-1} = x_{0-1-0} (z solves that linear equation) and
    x_{0-1} != x_{1-0}, from random rational transitions; None when this draw has none."""
    rng = np.random.default_rng(seed)
    if transitions == "input-independent":
        A = _rand_mat(rng, d)
        mats = {c: A for c in CHARS}
    elif transitions == "diagonal":
        mats = {c: [[F(int(rng.integers(-4, 5)), 3) if i == j else F(0) for j in range(d)] for i in range(d)]
                for c in CHARS}
    else:
        mats = {c: _rand_mat(rng, d) for c in CHARS}
    adds = {c: _rand_vec(rng, d) for c in CHARS}

    def diff(z):
        return [a - b for a, b in zip(run_affine(mats, adds, z, "0-0-1"), run_affine(mats, adds, z, "0-1-0"))]
    c0 = diff([F(0)] * d)
    K = [[diff([F(int(j == k)) for k in range(d)])[i] - c0[i] for j in range(d)] for i in range(d)]
    sol = solve(K, [[-x] for x in c0])
    if sol is None:
        return None
    z = [r[0] for r in sol]
    return (mats, adds, z) if consistent_on_proof_strings(mats, adds, z) else None


def _decide_subtraction(transitions: str, profile: str, witness_note: str) -> CheckResult:
    """Propositions 1-2 decided: the symbolic identity proves inconsistency for every model of the class; if it
    does not vanish, exact witnesses are searched (z solves the equality requirement, so a draw that satisfies the
    inequality is a consistent model)."""
    gap = symbolic_gap(transitions)
    if gap == 0:
        witness = consistent_on_proof_strings(*dense_subtraction_model())
        return CheckResult("holds", f"(x_{{0-1}} - x_{{1-0}}) - (x_{{0-0-1}} - x_{{0-1-0}}) = 0 identically for "
                           f"{transitions} transitions (sympy, {witness_note}): the two requirements contradict each "
                           "other for every model of the class", details={"dense_witness_consistent": witness})
    for seed in range(20 if profile == "quick" else 200):
        w = consistent_witness(transitions, seed)
        if w is not None:
            mats, adds, z = w
            return CheckResult("falsified", f"consistent model with {transitions} transitions",
                               counterexample={"A": {c: mstr(m) for c, m in mats.items()},
                                               "u": {c: [fstr(x) for x in v] for c, v in adds.items()},
                                               "z": [fstr(x) for x in z]})
    return CheckResult("open", f"the identity does not vanish ({gap}) and no witness was found")


@entry("002:proposition-1", perturb={"transitions": "dense"})
def check_proposition_1(profile: str, transitions: str = "input-independent") -> CheckResult:
    return _decide_subtraction(transitions, profile, "non-commutative A: every dimension")


@entry("002:proposition-2", perturb={"transitions": "dense"})
def check_proposition_2(profile: str, transitions: str = "diagonal") -> CheckResult:
    return _decide_subtraction(transitions, profile, "commuting scalars per coordinate")


# =========================================================================== Section 3.2, Liquid-S4
def liquid_witness(A: list | None = None):
    """Liquid-S4 (eq. 4): A_k = A + diag(B u_k), additive term B u_k. Fixed rational A and w_c = B u_c; the initial
    state z solves the linear equation x_{0-0-1} = x_{0-1-0} exactly."""
    A = [[F(0), F(1)], [F(1), F(1)]] if A is None else A
    w = {"0": [F(0), F(1)], "-": [F(0), F(1)], "1": [F(1), F(0)]}
    mats = {c: [[A[i][j] + (w[c][i] if i == j else 0) for j in range(2)] for i in range(2)] for c in CHARS}

    def diff(z):
        return [a - b for a, b in zip(run_affine(mats, w, z, "0-0-1"), run_affine(mats, w, z, "0-1-0"))]
    # diff is affine in z: diff(z) = K z + c; solve K z = -c
    c0 = diff([F(0), F(0)])
    K = [[diff([F(int(j == 0)), F(int(j == 1))])[i] - c0[i] for j in range(2)] for i in range(2)]
    sol = solve(K, [[-c0[0]], [-c0[1]]])
    z = None if sol is None else [r[0] for r in sol]
    return mats, w, z, A


@entry("002:section-3.2.liquid-s4", perturb={"A": [[F(1, 2), F(0)], [F(0), F(1)]]})
def check_liquid(profile: str, A: list | None = None) -> CheckResult:
    """``A``: the input-independent part (the witness's [[0, 1], [1, 1]]; the perturbation, a diagonal A, makes
    every transition diagonal, so Proposition 2 applies and no initial state is consistent)."""
    mats, w, z, A = liquid_witness(A)
    if z is None:
        return CheckResult("falsified", "x_{0-0-1} = x_{0-1-0} has no solution z for this A",
                           counterexample={"A": mstr(A)})
    ok = consistent_on_proof_strings(mats, w, z)
    if not ok:
        return CheckResult("falsified", "witness not consistent", counterexample={"z": [fstr(x) for x in z]})
    return CheckResult("holds", "exact Liquid-S4 witness meets both requirements",
                       details={"A": mstr(A), "z": [fstr(x) for x in z]})
