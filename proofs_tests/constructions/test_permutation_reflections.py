"""Paper 000, Theorem 3 (group automata in one layer of reflections): compile, certify by exact BFS, float64
long-word cross-check, resource profile. Its special cases in width one and two (Sections 4.1, 4.2) are in
test_parity_sign.py and test_cyclic_rotation.py.

Oracles independent of the constructions: the automaton itself (certify compares with fsa.outputs), exact ranks of
``A - I`` by sympy (the least number of reflections whose product is an orthogonal A is rank(A - I), Cartan-
Dieudonne), GAP's MinimalFaithfulPermutationDegree for the width, and the closed formula for Z_m.
"""
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.sources import load_source
from lrnnkit.certify import certify
from lrnnkit.constructions import compile, get
from lrnnkit.constructions import permutation_reflections as PR
from lrnnkit.errors import InputError

GROUPS_QUICK = ([f"Z{m}" for m in range(2, 13)] + [f"D{m}" for m in range(3, 9)]
                + ["S3", "S4", "S5", "A4", "A5"])


def _certified(model, fsa):
    c = certify(model, fsa, float_steps=10_000)
    assert c.certified, (c.reason, c.counterexample, c.expected, c.got)
    assert c.method == "exact-bfs"
    # float64 reference executor on 4 random words of 10^4 steps agrees with the automaton at every step
    assert c.float_check["mismatches"] == 0, c.float_check
    assert c.eigenvalues_in_unit_interval
    return c


def _exact_rank(M) -> int:
    return sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in r] for r in M]).rank()


def _is_orthogonal_float(A) -> bool:
    # permutation / rotation matrices: float64 products of <= 11 reflections, error ~1e-15; 1e-12 is generous
    return np.allclose(A.T @ A, np.eye(len(A)), atol=1e-12)


@pytest.mark.parametrize("name", GROUPS_QUICK)
def test_theorem3_certifies(name):
    fsa = load_source(f"group:{name}")
    model = compile(fsa, construction="householder-permutation")
    c = _certified(model, fsa)
    assert c.reachable_states == fsa.n_states           # one model state per group element (regular action)
    L = model.layers[0]
    assert len(model.layers) == 1 and L.kind == "gh"
    n = L.width
    for t in L.transitions:
        # every factor is a reflection (beta = 2) along e_i - e_j, and the count is the minimum rank(A - I)
        assert all(f.beta_exact == 2 for f in t.factors)
        assert all(sorted(x for x in f.u_exact if x != 0) == [-1, 1] for f in t.factors)
        D = [[t.A_exact[i][j] - int(i == j) for j in range(n)] for i in range(n)]
        assert len(t.factors) == _exact_rank(D)
        assert _is_orthogonal_float(t.A)
        assert np.linalg.norm(t.A, 2) <= 1 + 1e-12
    assert L.max_factors() <= n - 1                      # 000, Proposition 1.2 / Theorem 3 with k <= n


def test_s5_profile_for_the_lead():
    fsa = load_source("group:S5")
    model = compile(fsa)                                  # automatic choice
    assert model.provenance["construction"] == "householder-permutation"
    assert model.widths == [5] and model.layers[0].max_factors() == 4
    _certified(model, fsa)


def _zm_min_degree(m: int) -> int:
    # minimal faithful degree of Z_m: sum of the prime-power factors (Johnson 1971); Z_1 -> 1
    total, p, k = 0, 2, m
    while k > 1:
        if k % p == 0:
            q = 1
            while k % p == 0:
                k //= p
                q *= p
            total += q
        p += 1
    return max(total, 1)


@pytest.mark.parametrize("m", range(2, 13))
def test_theorem3_width_cyclic_formula(m):
    model = compile(load_source(f"group:Z{m}"), construction="householder-permutation")
    assert model.widths == [_zm_min_degree(m)]


@pytest.mark.gap
def test_theorem3_width_is_gap_minimal_degree():
    gap = shutil.which("gap")
    if gap is None:
        pytest.skip("GAP not installed")
    gapname = {"D": "DihedralGroup(IsPermGroup, 2*{})", "S": "SymmetricGroup({})", "A": "AlternatingGroup({})",
               "Z": "CyclicGroup(IsPermGroup, {})"}
    names = GROUPS_QUICK
    script = "".join(f"Print(MinimalFaithfulPermutationDegree({gapname[n[0]].format(n[1:])}), \"\\n\");\n"
                     for n in names)
    res = subprocess.run([gap, "-q", "-b"], input=script + "QUIT;\n", capture_output=True, text=True, timeout=600)
    degrees = [int(x) for x in res.stdout.split()]
    assert len(degrees) == len(names), res.stdout + res.stderr
    for n, d in zip(names, degrees):
        assert compile(load_source(f"group:{n}"), construction="householder-permutation").widths == [d], n


def test_not_applicable_gives_input_error():
    fsa = load_source("flipflop")
    for name in ("householder-permutation", "cyclic-rotation", "parity-sign"):
        assert get(name).reason_not_applicable(fsa)
        with pytest.raises(InputError):
            compile(fsa, construction=name)
    with pytest.raises(InputError, match="not cyclic|not abelian"):
        compile(load_source("group:S3"), construction="cyclic-rotation")
    with pytest.raises(InputError, match="order"):
        compile(load_source("group:Z3"), construction="parity-sign")


def test_permutation_factors_product_exact():
    # the factor product is the permutation matrix P[p[i], i] = 1 (exact), with moved - cycles factors
    rng = np.random.default_rng(0)
    for n in range(1, 8):
        for _ in range(10):
            p = rng.permutation(n).tolist()
            t = PR.Transition.from_factors(PR.permutation_factors(p), n)
            P = [[Fraction(int(p[j] == i)) for j in range(n)] for i in range(n)]
            assert t.A_exact == P
            moved = sum(1 for i in range(n) if p[i] != i)
            cyc = len([c for c in PR.S.cycles(p)])
            assert len(t.factors) == moved - cyc


# ---------------------------------------------------------------------------------------------- random automata
@st.composite
def permutation_automata(draw):
    n = draw(st.integers(2, 6))
    k = draw(st.integers(1, 3))
    perms = [draw(st.permutations(range(n))) for _ in range(k)]
    labels = [str(draw(st.integers(0, 2))) for _ in range(n)]
    return FSA(tuple(f"a{i}" for i in range(k)), np.array(perms).T, 0, labels=tuple(labels), name="random")


@given(permutation_automata())
def test_theorem3_random_permutation_automata(fsa):
    model = compile(fsa, construction="householder-permutation")
    c = certify(model, fsa, float_steps=500)
    assert c.certified, (c.counterexample, c.reason)
    assert c.float_check["mismatches"] == 0
    # the printed bound k - 1 (k = most states moved by a letter) on the factors per token
    # (Q = the reachable states, as in the proof of 000 Theorem 3)
    reach = PR.S.reachable_states(fsa)
    k = max(sum(1 for q in reach if fsa.delta[q, a] != q) for a in range(fsa.n_letters))
    assert model.layers[0].max_factors() <= max(k - 1, 0)


@pytest.mark.slow
def test_theorem3_s6():
    fsa = load_source("group:S6")
    model = compile(fsa, construction="householder-permutation")
    _certified(model, fsa)
    assert model.widths == [6] and model.layers[0].max_factors() == 5
