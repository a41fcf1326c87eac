"""Paper 002: 002:proposition-1, 002:proposition-2, 002:section-3.2.liquid-s4.

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np

from .._exact import exact_matmul as mm, find_or_none, fstr, madd_list as add, mstr, solve
from ..registry import CheckResult, statement
from ._common import CHARS, PAPER


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
    (A_d = [[1, d], [0, 1]]), '-' sets the sign to -1 (A_- = [[1, 0], [0, 0]], u_- = (0, -1)); z = (0, 1). It meets
    the consistency requirement on the proofs' strings: the limitation is about diagonal (commuting) transitions."""
    mats = {"0": [[F(1), F(0)], [F(0), F(1)]], "1": [[F(1), F(1)], [F(0), F(1)]], "-": [[F(1), F(0)], [F(0), F(0)]]}
    adds = {"0": [F(0), F(0)], "1": [F(0), F(0)], "-": [F(0), F(-1)]}
    return mats, adds, [F(0), F(1)]


# =========================================================================== Proposition 1
@statement(
    id="002:proposition-1", paper=PAPER, kind="proposition",
    tests=["proofs_tests/test_theorems_B_002.py::test_proposition_1_symbolic_identity"],
    statement="An input-independent LRNN is inconsistent in representing subtraction.",
    hypotheses="x_k = A x_{k-1} + B u_k with A, B input-independent (any dimension, any initial state z); "
               "'consistent' (from the proof): x_{0-1} != x_{1-0} since 0-1 != 1-0, and x_{0-0-1} = x_{0-1-0} since "
               "0-0-1 = 0-1-0.",
    conclusion="The two requirements cannot both hold.",
    verdict="holds",
    evidence="Both differences equal (A^2 - I)(u_0 - u_1) (sympy symbolic identity for generic 2x2 A in "
             "proofs_tests/test_theorems_B_002.py); exact hypothesis search (d <= 3, rational A, u, z) for a "
             "consistent input-independent LRNN finds none. The same predicate is satisfiable by an input-dependent "
             "2x2 model (see 002:proposition-2), so the check can fail.",
    notes="The proposition concerns states; with a non-linear readout h (allowed by eq. 1) an input-independent "
          "LRNN can still output the value of every subtraction expression: see 002:claim-section-2.")
def check_proposition_1(profile: str) -> CheckResult:
    from hypothesis import strategies as st
    strat = st.tuples(st.integers(1, 3), st.integers(0, 2**31 - 1))

    def consistent(args):
        d, seed = args
        rng = np.random.default_rng(seed)
        A = _rand_mat(rng, d)
        mats = {c: A for c in CHARS}
        adds = {c: _rand_vec(rng, d) for c in CHARS}
        return consistent_on_proof_strings(mats, adds, _rand_vec(rng, d))

    cx = find_or_none(strat, consistent, profile, 150, 2000)
    if cx is not None:
        return CheckResult("falsified", "consistent input-independent LRNN found", counterexample=list(cx))
    witness = consistent_on_proof_strings(*dense_subtraction_model())
    return CheckResult("holds", "no consistent input-independent LRNN in the search; the predicate is satisfiable "
                                "by an input-dependent model", details={"input_dependent_witness_consistent": witness})


# =========================================================================== Proposition 2
@statement(
    id="002:proposition-2", paper=PAPER, kind="proposition",
    tests=["proofs_tests/test_theorems_B_002.py::test_dense_subtraction_model_states"],
    statement="A diagonal input-dependent LRNN is inconsistent in representing subtraction.",
    hypotheses="x_k = diag(v_k) x_{k-1} + B u_k with v_k = f(u_k) (A_0, A_-, A_1 diagonal), any initial state z; "
               "consistency as in Proposition 1.",
    conclusion="x_{0-1} != x_{1-0} and x_{0-0-1} = x_{0-1-0} cannot both hold.",
    verdict="holds",
    evidence="Coordinate-wise (diagonal maps decouple), x_{0-1} - x_{1-0} and x_{0-0-1} - x_{0-1-0} are the same "
             "polynomial in (a_0, a_-, a_1, u_0, u_-, u_1) because a_1 a_- a_0 = a_0 a_- a_1 multiplies both z and "
             "x_{0-}: sympy proves the scalar identity; exact hypothesis search (d <= 3) finds no consistent diagonal "
             "model, while the 2x2 input-dependent model (value, sign) with A_d = [[1, d], [0, 1]], A_- = [[1, 0], "
             "[0, 0]], u_- = (0, -1), z = (0, 1) is consistent (non-diagonal transitions escape the proposition).",
    notes="Appendix A.1 prints x_{0-} = A_- A_0 z + A_- u_0 + u_ (the last subscript lost); reconstructed as u_-.")
def check_proposition_2(profile: str) -> CheckResult:
    import sympy
    a0, am, a1, u0, um, u1, z = sympy.symbols("a0 am a1 u0 um u1 z")
    mats = {"0": a0, "-": am, "1": a1}
    adds = {"0": u0, "-": um, "1": u1}

    def run(w, x):
        for c in w:
            x = mats[c] * x + adds[c]
        return x
    d1 = run("0-1", z) - run("1-0", z)
    d2 = run("0-0-1", z) - run("0-1-0", z)
    symbolic = sympy.expand(d1 - d2) == 0
    from hypothesis import strategies as st
    strat = st.tuples(st.integers(1, 3), st.integers(0, 2**31 - 1))

    def consistent(args):
        d, seed = args
        rng = np.random.default_rng(seed)
        M = {c: [[F(int(rng.integers(-4, 5)), 3) if i == j else F(0) for j in range(d)] for i in range(d)]
             for c in CHARS}
        adds_ = {c: _rand_vec(rng, d) for c in CHARS}
        return consistent_on_proof_strings(M, adds_, _rand_vec(rng, d))

    cx = find_or_none(strat, consistent, profile, 150, 2000)
    witness = consistent_on_proof_strings(*dense_subtraction_model())
    if not symbolic or cx is not None:
        return CheckResult("falsified", "consistent diagonal LRNN found",
                           counterexample=None if cx is None else list(cx))
    return CheckResult("holds", "scalar identity proved symbolically; no consistent diagonal model in the search",
                       details={"non_diagonal_witness_consistent": witness})


# =========================================================================== Section 3.2, Liquid-S4
def liquid_witness():
    """Liquid-S4 (eq. 4): A_k = A + diag(B u_k), additive term B u_k. Fixed rational A and w_c = B u_c; the initial
    state z solves the linear equation x_{0-0-1} = x_{0-1-0} exactly."""
    A = [[F(0), F(1)], [F(1), F(1)]]
    w = {"0": [F(0), F(1)], "-": [F(0), F(1)], "1": [F(1), F(0)]}
    mats = {c: [[A[i][j] + (w[c][i] if i == j else 0) for j in range(2)] for i in range(2)] for c in CHARS}

    def diff(z):
        return [a - b for a, b in zip(run_affine(mats, w, z, "0-0-1"), run_affine(mats, w, z, "0-1-0"))]
    # diff is affine in z: diff(z) = K z + c; solve K z = -c
    c0 = diff([F(0), F(0)])
    K = [[diff([F(int(j == 0)), F(int(j == 1))])[i] - c0[i] for j in range(2)] for i in range(2)]
    sol = solve(K, [[-c0[0]], [-c0[1]]])
    z = [r[0] for r in sol]
    return mats, w, z, A


@statement(
    id="002:section-3.2.liquid-s4", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_liquid_witness_is_noncommuting"],
    statement="Liquid-S4, x_k = (A + diag(B u_k)) x_{k-1} + B u_k (eq. 4), 'does not suffer from the limitation "
              "outlined in Proposition 2'.",
    hypotheses="A input-independent (not diagonal), B u_k input vectors.",
    conclusion="Some Liquid-S4 instance satisfies x_{0-1} != x_{1-0} and x_{0-0-1} = x_{0-1-0}.",
    verdict="holds",
    evidence="Exact witness: A = [[0, 1], [1, 1]], B u_0 = (0, 1), B u_- = (0, 1), B u_1 = (1, 0), and the initial "
             "state z = (5/4, -5/4) solving the (linear) equation x_{0-0-1} = x_{0-1-0}; then x_{0-1} != x_{1-0}. "
             "(Needs A_1 A_- A_0 != A_0 A_- A_1, i.e. non-commuting transitions.)")
def check_liquid(profile: str) -> CheckResult:
    mats, w, z, A = liquid_witness()
    ok = consistent_on_proof_strings(mats, w, z)
    if not ok:
        return CheckResult("falsified", "witness not consistent", counterexample={"z": [fstr(x) for x in z]})
    return CheckResult("holds", "exact Liquid-S4 witness meets both requirements",
                       details={"A": mstr(A), "z": [fstr(x) for x in z]})
