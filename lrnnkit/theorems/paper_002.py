"""Paper 002 — Fan, Chi, Rudnicky, "Advancing Regular Language Reasoning in Linear Recurrent Neural Networks": every
formal statement as an executable check.

The paper's LRNN (eq. 1) is ``x_k = A_k x_{k-1} + B u_k``, ``y_k = h(x_k)`` with a readout h that "may or may not be
linear". Propositions 1 and 2 (input-independent and diagonal input-dependent LRNNs are "inconsistent in
representing subtraction") are proved by comparing the states of the four strings ``0-1``, ``1-0``, ``0-0-1`` and
``0-1-0``: their notion of consistency (reconstructed from the proofs) is at the level of states — different values
need different states (``x_{0-1} != x_{1-0}``) and equal values equal states (``x_{0-0-1} = x_{0-1-0}``). The block-
diagonal model (eqs. 5-6) constrains every column of every block to p-norm <= 1; eq. 7 shows products stay bounded
for p = 1.

Below, ``u_c`` denotes the additive term ``B u`` of character c (the proofs absorb B into u).
"""
from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np

from ._exact import exact_matmul as mm, find_or_none, fstr, madd_list as add, mstr, solve
from .registry import CheckResult, statement

PAPER = "002"
CHARS = ("0", "-", "1")


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


# =========================================================================== Section 2 claim, non-linear readout
def base4_states(max_len: int) -> dict:
    """All strings over {0, -, 1} of length <= max_len -> the state of the scalar input-independent LRNN
    x_k = x_{k-1} / 4 + c(s_k) with codes c(0) = 1, c(-) = 2, c(1) = 3 and x_0 = 0 (exact)."""
    code = {"0": F(1), "-": F(2), "1": F(3)}
    out = {"": F(0)}
    frontier = [""]
    for _ in range(max_len):
        nxt = []
        for w in frontier:
            for c in CHARS:
                out[w + c] = out[w] / 4 + code[c]
                nxt.append(w + c)
        frontier = nxt
    return out


def base4_decode(x: F) -> str:
    """Inverse of the encoding: the last character is floor(x) (since 0 <= x_{k-1}/4 < 1), then x_{k-1} =
    4 (x - floor(x)). Terminates at x = 0 (the empty string)."""
    inv = {1: "0", 2: "-", 3: "1"}
    s = []
    while x != 0:
        k = math.floor(x)
        if k not in inv:
            raise ValueError(f"not a state of the encoder: {x}")
        s.append(inv[k])
        x = 4 * (x - k)
    return "".join(reversed(s))


def base4_collapse_length(fmt: str) -> int | None:
    """Shortest m such that the expressions "0" + "-0"*m and "1" + "-0"*m (values 0 and 1) reach the same state when
    the encoder runs in the number format ``fmt`` with paper 000's cast model (product x/4 exact then cast, sum cast;
    lrnnkit.precision.cast.cast_exact). None if the precision module is unavailable or no collapse up to m = 80."""
    try:
        from ..precision.cast import cast_exact
    except ImportError:  # the precision module is another engineer's; the verdict does not depend on it
        return None
    code = {"0": F(1), "-": F(2), "1": F(3)}

    def run(word):
        x = F(0)
        for c in word:
            x = F(cast_exact(F(cast_exact(x / 4, fmt)) + code[c], fmt))
        return x
    for m in range(1, 81):
        if run("0" + "-0" * m) == run("1" + "-0" * m):
            return m
    return None


def subtraction_value(w: str) -> int | None:
    """Value of a well-formed expression digit (- digit)*, else None."""
    if len(w) % 2 == 0 or any((c in "01") != (i % 2 == 0) for i, c in enumerate(w)):
        return None
    digits = [int(c) for c in w[::2]]
    return digits[0] - sum(digits[1:])


@statement(
    id="002:claim-section-2", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_base4_encoding_is_injective",
           "proofs_tests/test_theorems_B_002.py::test_subtraction_value"],
    statement="'In this section, we theoretically show that most LRNNs are unable to represent arithmetic operations' "
              "... 'such an input-independent matrix A cannot represent subtraction' (Section 2.1), for the LRNN of "
              "eq. (1) whose readout y_k = h(x_k) 'may or may not be a linear operation'.",
    hypotheses="Input-independent LRNN x_k = A x_{k-1} + B u_k with an arbitrary readout function h.",
    conclusion="No such LRNN outputs the value of every subtraction expression over {0, 1, -}.",
    verdict="falsified",
    evidence="Counterexample (exact): scalar state, A = 1/4, B u_0 = 1, B u_- = 2, B u_1 = 3, z = 0. The state "
             "x_k = x_{k-1}/4 + c_k is injective on strings (the last symbol is floor(x_k) because 0 <= x_{k-1}/4 < "
             "1), "
             "so h = value o decode is a well-defined readout; checked exhaustively on all strings of length <= 9 "
             "(decode(x_w) = w, and equal states never carry different values). Proposition 1 is about states being "
             "equal, not about what a readout can compute; the claim holds for linear readouts of states that "
             "must coincide, and in finite precision: run in fp32 with paper 000's cast model the encoder maps "
             "0(-0)^m and 1(-0)^m (values 0 and 1) to the same state from m = 7 on (bf16: m = 3), cf. paper 000.",
    counterexample={"A": "1/4", "Bu": {"0": "1", "-": "2", "1": "3"}, "z": "0",
                    "h": "h(x) = value of the expression decode(x); decode: last char = floor(x), "
                         "x <- 4 (x - floor(x))",
                    "example": {"0-1": "x = 3 + 2/4 + 1/16 = 57/16 -> -1", "1-0": "x = 1 + 2/4 + 3/16 = 27/16 -> 1"}},
    notes="Reading of 'represent' with eq. 1's readout h; under the proofs' state-level reading the statement is "
          "002:proposition-1 (holds).")
def check_claim_section_2(profile: str) -> CheckResult:
    L = 7 if profile == "quick" else 10
    states = base4_states(L)
    seen: dict = {}
    for w, x in states.items():
        if base4_decode(x) != w:
            return CheckResult("holds", f"encoding not injective at {w!r}")
        v = subtraction_value(w)
        if v is not None:
            if x in seen and seen[x] != v:
                return CheckResult("holds", "two expressions share a state with different values")
            seen[x] = v
    assert states["0-1"] == F(57, 16) and states["1-0"] == F(27, 16)
    collapse = {fmt: base4_collapse_length(fmt) for fmt in ("fp32", "bf16")}
    return CheckResult("falsified", f"exact injective input-independent encoding verified on all {len(states)} strings "
                       f"of length <= {L}; readout h = value o decode computes subtraction",
                       counterexample={"A": "1/4", "Bu": {"0": "1", "-": "2", "1": "3"}, "z": "0"},
                       details={"finite_precision_collapse_m": collapse,
                                "meaning": "in format F the words 0(-0)^m and 1(-0)^m (values 0, 1) share a state"})


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


# =========================================================================== Section 3: FSA columns
@statement(
    id="002:section-3.fsa-columns", paper=PAPER, kind="claim",
    statement="The transition function of an FSA, represented in matrix form, is input-dependent and its column "
              "vectors all have unit norm (in ||.||_1).",
    hypotheses="Complete deterministic FSA; matrix of letter a: M(a)[q', q] = 1 iff delta(q, a) = q'.",
    conclusion="Every column of every M(a) has 1-norm exactly 1 (indeed is a standard basis vector, so every p-norm "
               "is 1 and the p-norm constraint of eq. 6 holds for every p).",
    verdict="holds",
    evidence="Exhaustive over all complete DFAs with n <= 3 states and 2 letters (1 + 16 + 729 transition tables) "
             "and a "
             "hypothesis search over n <= 8, k <= 4.")
def check_fsa_columns(profile: str) -> CheckResult:
    import itertools
    for n in range(1, 4):
        for table in itertools.product(range(n), repeat=2 * n):
            delta = np.array(table).reshape(n, 2)
            for a in range(2):
                M = np.zeros((n, n), dtype=np.int64)
                for q in range(n):
                    M[delta[q, a], q] = 1
                if not np.all(np.abs(M).sum(axis=0) == 1):
                    return CheckResult("falsified", "column norm != 1", counterexample=delta.tolist())
    from hypothesis import strategies as st
    strat = st.tuples(st.integers(1, 8), st.integers(1, 4)).flatmap(
        lambda nk: st.lists(st.integers(0, nk[0] - 1), min_size=nk[0] * nk[1], max_size=nk[0] * nk[1])
        .map(lambda v, nk=nk: np.array(v).reshape(nk)))

    def bad(delta):
        n, k = delta.shape
        for a in range(k):
            M = np.zeros((n, n), dtype=np.int64)
            M[delta[:, a], np.arange(n)] = 1
            if not np.all(M.sum(axis=0) == 1):
                return True
        return False
    cx = find_or_none(strat, bad, profile, 100, 2000)
    if cx is not None:
        return CheckResult("falsified", "column norm != 1", counterexample=cx.tolist())
    return CheckResult("holds", "every column of every letter matrix is a standard basis vector")


# =========================================================================== eq. (6): normalization and monotonicity
def _pnorm_mp(v, p):
    import mpmath
    return mpmath.fsum(abs(mpmath.mpf(x.numerator) / x.denominator) ** p for x in v) ** (1 / p)


@statement(
    id="002:equation-6.normalization", paper=PAPER, kind="claim",
    statement="For any vector v, v' = v / max(1, ||v||_p) satisfies the p-norm constraint ||v'||_p <= 1 of eq. (6).",
    hypotheses="p >= 1, v real.",
    conclusion="||v'||_p <= 1.",
    verdict="holds",
    evidence="Exact for p = 1 (Fractions) and 60-digit mpmath for p in {6/5, 3/2, 2, 3, 7/2} over a hypothesis "
             "search (dimension <= 6, entries k/4): no violation (||v'||_p = min(||v||_p, 1)). Tolerance for "
             "mpmath: 1e-50.")
def check_eq6_normalization(profile: str) -> CheckResult:
    import mpmath
    from hypothesis import strategies as st
    strat = st.tuples(st.sampled_from([F(1), F(6, 5), F(3, 2), F(2), F(3), F(7, 2)]),
                      st.lists(st.integers(-40, 40).map(lambda k: F(k, 4)), min_size=1, max_size=6))

    def bad(args):
        p, v = args
        if p == 1:
            n = sum((abs(x) for x in v), F(0))
            vp = [x / max(F(1), n) for x in v]
            return sum((abs(x) for x in vp), F(0)) > 1
        with mpmath.workdps(60):
            pm = mpmath.mpf(p.numerator) / p.denominator
            n = _pnorm_mp(v, pm)
            s = max(mpmath.mpf(1), n)
            vp = [abs(mpmath.mpf(x.numerator) / x.denominator) / s for x in v]
            return mpmath.fsum(x ** pm for x in vp) ** (1 / pm) > 1 + mpmath.mpf(10) ** -50

    cx = find_or_none(strat, bad, profile, 150, 2000)
    if cx is not None:
        return CheckResult("falsified", "normalized vector exceeds the bound",
                           counterexample={"p": fstr(cx[0]), "v": [fstr(x) for x in cx[1]]})
    return CheckResult("holds", "no violation")


@statement(
    id="002:equation-6.monotonicity", paper=PAPER, kind="claim",
    statement="Because ||v||_p >= ||v||_q when p <= q, a smaller p imposes a stronger constraint on the columns of "
              "A_k^(i).",
    hypotheses="1 <= p <= q.",
    conclusion="||v||_p >= ||v||_q for all v; hence {||v||_p <= 1} is contained in {||v||_q <= 1}.",
    verdict="holds",
    evidence="60-digit mpmath over a hypothesis search (dimension <= 6, entries k/4, p < q from {1, 6/5, 3/2, 2, 3, "
             "7/2}); tolerance 1e-50.")
def check_eq6_monotonicity(profile: str) -> CheckResult:
    import mpmath
    from hypothesis import strategies as st
    ps = [F(1), F(6, 5), F(3, 2), F(2), F(3), F(7, 2)]
    strat = st.tuples(st.integers(0, 5), st.integers(0, 5),
                      st.lists(st.integers(-40, 40).map(lambda k: F(k, 4)), min_size=1, max_size=6))

    def bad(args):
        i, j, v = args
        p, q = min(ps[i], ps[j]), max(ps[i], ps[j])
        with mpmath.workdps(60):
            a = _pnorm_mp(v, mpmath.mpf(p.numerator) / p.denominator)
            b = _pnorm_mp(v, mpmath.mpf(q.numerator) / q.denominator)
            return a < b - mpmath.mpf(10) ** -50

    cx = find_or_none(strat, bad, profile, 150, 2000)
    if cx is not None:
        return CheckResult("falsified", "monotonicity fails", counterexample=[str(x) for x in cx])
    return CheckResult("holds", "no violation")


# =========================================================================== eq. (7)
def _normalize_columns_l1(M: list) -> list:
    n = len(M)
    out = [list(r) for r in M]
    for j in range(len(M[0])):
        s = sum((abs(M[i][j]) for i in range(n)), F(0))
        if s > 1:
            for i in range(n):
                out[i][j] = M[i][j] / s
    return out


def _abs(M):
    return [[abs(x) for x in r] for r in M]


@statement(
    id="002:equation-7", paper=PAPER, kind="claim",
    statement="Take p = 1: if no column of A_k^(i) or A_{k+1}^(i) has 1-norm greater than 1, then A_{k+1}^(i) A_k^(i) "
              "is the same kind of matrix: 1^T |A_{k+1} A_k| <= 1^T |A_{k+1}| |A_k| <= 1^T |A_k| <= 1^T (eq. 7); "
              "hence p = 1 stabilizes the block-diagonal recurrence (5).",
    hypotheses="Square blocks with column 1-norms <= 1 (obtained by eq. 6's normalization).",
    conclusion="Each inequality of the chain (entrywise), and by induction every product of any length has column "
               "1-norms <= 1.",
    verdict="holds",
    evidence="Exact (Fractions) hypothesis search over b <= 4, products of up to 6 blocks, each inequality of the "
             "chain checked entrywise at every step: no violation.")
def check_eq7(profile: str) -> CheckResult:
    from hypothesis import strategies as st
    strat = st.tuples(st.integers(1, 4), st.integers(2, 6)).flatmap(
        lambda bk: st.lists(st.lists(st.lists(st.integers(-9, 9).map(lambda k: F(k, 4)), min_size=bk[0],
                                              max_size=bk[0]), min_size=bk[0], max_size=bk[0]),
                            min_size=bk[1], max_size=bk[1]))

    def bad(blocks):
        blocks = [_normalize_columns_l1(M) for M in blocks]
        b = len(blocks[0])
        one = [[F(1)] * b]
        P = blocks[0]
        for A in blocks[1:]:
            lhs = mm(one, _abs(mm(A, P)))[0]
            mid = mm(one, mm(_abs(A), _abs(P)))[0]
            right = mm(one, _abs(P))[0]
            if (any(x > y for x, y in zip(lhs, mid)) or any(x > y for x, y in zip(mid, right))
                    or any(x > 1 for x in right)):
                return True
            P = mm(A, P)
        return any(x > 1 for x in mm(one, _abs(P))[0])

    cx = find_or_none(strat, bad, profile, 60, 1500)
    if cx is not None:
        return CheckResult("falsified", "chain fails", counterexample=[mstr(M) for M in cx])
    return CheckResult("holds", "every inequality of eq. 7 holds on every example")


# =========================================================================== Section 3.3, p > 1
P12_BLOCK = [[F(11, 20), F(11, 20)], [F(11, 20), F(11, 20)]]


def column_pnorm_le1_exact(M: list, p: F) -> bool:
    """sum_i |m_ij|^p <= 1 for every column, exactly for rational p = s/t: compare (sum_i |m_ij|^p)^t <= 1 is not
    polynomial, so the check is done for columns with equal-magnitude entries (the counterexample's form):
    k entries of magnitude m satisfy k m^p <= 1  <=>  k^t m^s <= 1."""
    s, t = p.numerator, p.denominator
    for j in range(len(M[0])):
        mags = {abs(M[i][j]) for i in range(len(M)) if M[i][j] != 0}
        if len(mags) > 1:
            raise ValueError("exact p-norm test implemented for equal-magnitude columns only")
        if mags:
            m = mags.pop()
            k = sum(1 for i in range(len(M)) if M[i][j] != 0)
            if F(k) ** t * m ** s > 1:
                return False
    return True


@statement(
    id="002:claim-section-3.3.small-p", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_small_p_counterexample_by_hand"],
    statement="'A smaller p imposes a stronger constraint on the columns of A_k^(i). In other words, we can stabilize "
              "Eq. (5) by selecting a sufficiently small p' ... 'p = 1.2 is small enough' (Section 4.4 uses p = 1.2).",
    hypotheses="Blocks A^(i) whose columns all have p-norm <= 1 (eq. 6), p = 1.2 (or any p > 1).",
    conclusion="Products A_k ... A_1 of such blocks stay bounded for all k.",
    verdict="holds-as-corrected",
    evidence="Counterexample for p = 6/5 (exact): the 2x2 block with all entries 11/20 has columns of 6/5-norm "
             "(2 (11/20)^{6/5})^{5/6} <= 1 (equivalently 2^5 11^6 = 56689952 <= 20^6 = 64000000), yet "
             "A^k = (11/10)^{k-1} A: the entries of A^100 are (11/10)^99 11/20 > 6800. For every p > 1 the block "
             "b^{-1/p} J_b has "
             "spectral radius b^{1 - 1/p} > 1. Corrected bound ||A_k...A_1||_1 <= b^{k(1 - 1/p)} (Hoelder: column "
             "1-norm <= b^{1-1/p} column p-norm) checked in float64 over random normalized blocks (relative "
             "tolerance 1e-9) and attained by b^{-1/p} J_b.",
    counterexample={"p": "6/5", "A": [["11/20", "11/20"], ["11/20", "11/20"]], "A^k": "(11/10)^(k-1) A",
                    "A^100[0][0]": "(11/10)^99 * 11/20 > 6800"},
    corrected="With column p-norms <= 1 and block size b, ||A_k ... A_1||_1 <= b^{k(1 - 1/p)}, with equality for "
              "A = b^{-1/p} J_b; products are bounded uniformly in k iff p = 1 (or b = 1).")
def check_small_p(profile: str) -> CheckResult:
    A = P12_BLOCK
    if not column_pnorm_le1_exact(A, F(6, 5)):
        return CheckResult("holds", "recorded block violates the constraint")
    P = A
    for _ in range(99):
        P = mm(A, P)
    grows = P[0][0] == F(11, 10) ** 99 * F(11, 20) and P[0][0] > 6800
    # corrected bound, float64
    rng = np.random.default_rng(11)
    trials = 150 if profile == "quick" else 3000
    worst = 0.0
    for _ in range(trials):
        p = float(rng.choice([1.0, 1.2, 1.5, 2.0, 3.0]))
        b = int(rng.integers(1, 5))
        k = int(rng.integers(1, 9))
        prod = np.eye(b)
        for _ in range(k):
            M = rng.standard_normal((b, b))
            nrm = np.sum(np.abs(M) ** p, axis=0) ** (1 / p)
            M = M / np.maximum(1.0, nrm)
            prod = M @ prod
        bound = b ** (k * (1 - 1 / p))
        worst = max(worst, np.abs(prod).sum(axis=0).max() / bound)
    # tightness
    p, b, k = 1.2, 3, 7
    J = np.full((b, b), b ** (-1 / p))
    tight = np.abs(np.linalg.matrix_power(J, k)).sum(axis=0).max() / b ** (k * (1 - 1 / p))
    # tolerance 1e-9 relative: products of <= 8 small float64 matrices
    if not grows:
        return CheckResult("holds", "recorded block does not grow")
    if worst > 1 + 1e-9 or abs(tight - 1) > 1e-9:
        return CheckResult("falsified", f"corrected bound fails (worst ratio {worst})",
                           counterexample={"p": "6/5", "A": mstr(A)})
    return CheckResult("holds-as-corrected", f"p = 6/5 block grows like (11/10)^k; corrected bound b^(k(1-1/p)) holds "
                       f"on {trials} random products (worst ratio {worst:.3f}) and is attained",
                       counterexample={"p": "6/5", "A": mstr(A)},
                       corrected="||A_k...A_1||_1 <= b^(k(1-1/p)); bounded for all k iff p = 1")


# =========================================================================== Section 3.4 / Appendix A.2: PScan
def spt(x: np.ndarray):
    """Appendix A.2.1's ``spt`` exactly as printed (np.core.defchararray.add is np.char.add)."""
    assert len(x) % 2 == 1, "works when len(x) == 2**k -1 for k>=1"
    coef = x[::2]
    remain = x[1::2]
    coef_remain = np.char.add(coef[1:], remain[:, -1:])
    remain = np.concatenate([remain, coef_remain], axis=1)
    return coef, remain


def spt_rounds(seq_len: int) -> list:
    arr = np.array(["A" + str(i) for i in range(1, seq_len + 1)]).reshape(-1, 1)
    out = []
    for _ in range(int(np.ceil(np.log2(seq_len)))):
        coef, arr = spt(arr)
        out.append(coef.tolist())
    return out


PRINTED_SPT = [[["A1"], ["A3"], ["A5"], ["A7"]], [["A2", "A3A2"], ["A6", "A7A6"]],
               [["A4", "A5A4", "A6A5A4", "A7A6A5A4"]]]


@statement(
    id="002:appendix-A.2.1", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_pscan_round_count"],
    statement="The function spt() generates the intermediate matrices of PScan: for a length-8 generation the first "
              "step requires [A1, A3, A5, A7], the second [A2, A3A2, A6, A7A6], the third [A4, A5A4, A6A5A4, "
              "A7A6A5A4] (Section 3.4 and the printed output of Appendix A.2.1).",
    hypotheses="seq_len = 2^3 - 1 = 7.",
    conclusion="The printed output.",
    verdict="holds",
    evidence="The printed code, run verbatim (np.char.add for the deprecated np.core.defchararray.add), prints "
             "exactly the listed matrices.")
def check_spt(profile: str) -> CheckResult:
    got = spt_rounds(7)
    if got != PRINTED_SPT:
        return CheckResult("falsified", "spt output differs", counterexample=got)
    return CheckResult("holds", "spt output equals the printed one")


def pscan_printed(A: np.ndarray, u: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Appendix A.2.2's parallel scan, transcribed from the printed torch code to numpy object arrays (so it runs on
    Fractions): einsum('bncij,bnjk->bncik') and einsum('bncij,bnj->bnci') become batched matmuls. Returns the states
    x_0 .. x_{seq_len}, shape (bs, seq_len + 1, d)."""
    bs, seq_len, d, _ = A.shape
    log2_L = int(np.ceil(np.log2(seq_len + 1)))
    L = 2 ** log2_L
    n_zero = L - seq_len - 1
    zero = F(0)
    eu = np.concatenate([x0[:, None, :], u], axis=1)
    eu = np.concatenate([eu, np.full((bs, n_zero, d), zero, dtype=object)], axis=1)
    x = eu
    As = np.concatenate([A, np.full((bs, n_zero, d, d), zero, dtype=object)], axis=1)[:, :, None, :, :]
    for _ in range(log2_L):
        c = As.shape[2] * 2
        x = x.reshape(bs, L // c, c, d)
        x1, x2 = x[:, :, : c // 2], x[:, :, c // 2:]
        assert As.shape[1] % 2 == 1, "works when As.shape[1]== 2**k -1 for k>=1"
        coef = As[:, ::2]
        remain = As[:, 1::2]
        prodd = np.matmul(coef[:, 1:], remain[:, :, -1][:, :, None, :, :])
        remain = np.concatenate([remain, prodd], axis=2)
        x2 = x2 + np.matmul(coef, x1[:, :, -1][:, :, None, :, None])[..., 0]
        x = np.concatenate([x1, x2], axis=2)
        As = remain
    return x.reshape(bs, L, d)[:, : seq_len + 1, :]


def sequential(A: np.ndarray, u: np.ndarray, x0: np.ndarray) -> np.ndarray:
    bs, seq_len, d, _ = A.shape
    x = x0
    out = [x]
    for i in range(seq_len):
        x = np.matmul(A[:, i], x[:, :, None])[..., 0] + u[:, i]
        out.append(x)
    return np.stack(out, axis=1)


@statement(
    id="002:appendix-A.2.2", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_pscan_reproduces_printed_output"],
    statement="PScan is equivalent to Sequential: the printed parallel-scan code generates the same states "
              "x_0..x_T of x_k = A_k x_{k-1} + u_k as the sequential loop (shown for seq_len = 7), in "
              "ceil(log2 L) steps for a length-L generation; e.g. x_3 = A3 A2 (A1 u0 + u1) + (A3 u2 + u3).",
    hypotheses="Any seq_len (the code zero-pads to 2^k - 1), any square A_k.",
    conclusion="Identical outputs.",
    verdict="holds",
    evidence="The printed algorithm run on exact rationals (numpy object arrays of Fractions) agrees exactly with the "
             "sequential recurrence for every seq_len in 1..24 (quick; 1..70 deep), batch 2, d in {1, 2, 3}; the "
             "number of rounds is ceil(log2(seq_len + 1)).")
def check_pscan(profile: str) -> CheckResult:
    rng = np.random.default_rng(5)
    top = 24 if profile == "quick" else 70
    for seq_len in range(1, top + 1):
        d = int(rng.integers(1, 4))
        bs = 2
        A = np.empty((bs, seq_len, d, d), dtype=object)
        u = np.empty((bs, seq_len, d), dtype=object)
        x0 = np.empty((bs, d), dtype=object)
        for idx in np.ndindex(A.shape):
            A[idx] = F(int(rng.integers(-3, 4)), int(rng.integers(1, 4)))
        for idx in np.ndindex(u.shape):
            u[idx] = F(int(rng.integers(-3, 4)), int(rng.integers(1, 4)))
        for idx in np.ndindex(x0.shape):
            x0[idx] = F(int(rng.integers(-3, 4)))
        a, b = pscan_printed(A, u, x0), sequential(A, u, x0)
        if a.shape != b.shape or not np.all(a == b):
            return CheckResult("falsified", f"PScan differs from Sequential at seq_len {seq_len}",
                               counterexample={"seq_len": seq_len, "d": d})
    return CheckResult("holds", f"exact agreement for seq_len 1..{top}")


# =========================================================================== Section 4.1 examples
def _mod_arith_value(expr: list, M: int) -> int:
    """Value of digits and operators with x binding tighter than + and - (no eval): sum of signed products."""
    total, sign, prod = 0, 1, int(expr[0])
    i = 1
    while i < len(expr):
        op, v = expr[i], int(expr[i + 1])
        if op == "*":
            prod *= v
        else:
            total += sign * prod
            sign, prod = (1 if op == "+" else -1), v
        i += 2
    return (total + sign * prod) % M


@statement(
    id="002:section-4.1.examples", paper=PAPER, kind="claim",
    tests=["proofs_tests/test_theorems_B_002.py::test_mod_arith_precedence"],
    statement="Sum(5): input 0324 -> 4; EvenPair(5): input 0320 -> 1; ModArith(5): input 1+2-3x4 -> 1 "
              "(1 + 2 - 3 x 4 mod 5 = -9 mod 5 = 1).",
    hypotheses="Task definitions of Section 4.1.",
    conclusion="The printed outputs.",
    verdict="holds",
    evidence="Independent evaluators (sum mod M, first == last, precedence-aware modular arithmetic without eval) "
             "reproduce every printed output.")
def check_examples(profile: str) -> CheckResult:
    ok = sum(map(int, "0324")) % 5 == 4
    ok &= int("0320"[0] == "0320"[-1]) == 1
    ok &= _mod_arith_value(["1", "+", "2", "-", "3", "*", "4"], 5) == 1
    if not ok:
        return CheckResult("falsified", "an example disagrees", counterexample="see evaluators")
    return CheckResult("holds", "all printed examples reproduced")
