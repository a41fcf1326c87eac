"""Targeted tests for paper 004's statements (lrnnkit/theorems/paper_004/)."""
import subprocess
from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, strategies as st

from lrnnkit.certify import certify
from lrnnkit.executor import run_float
from lrnnkit.theorems import paper_004 as p4
from lrnnkit.theorems._exact import det
from lrnnkit.theorems.paper_004.section_2_3 import _eig_multiplicity


def test_rotation_scaling_blocks_commute_symbolically():
    a, b, c, d = sympy.symbols("a b c d", real=True)
    X = sympy.Matrix([[a, -b], [b, a]])
    Y = sympy.Matrix([[c, -d], [d, c]])
    assert (X * Y - Y * X).expand() == sympy.zeros(2, 2)
    # shared-basis conjugation keeps commutation (generic P; P^{-1} = adj(P)/det(P), so compare with adjugates)
    P = sympy.Matrix(2, 2, sympy.symbols("p0:4"))
    adj = P.adjugate()
    WX, WY = P * X * adj, P * Y * adj
    assert (WX * WY - WY * WX).expand() == sympy.zeros(2, 2)


@given(st.integers(1, 5), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_one_hot_tensor_slices_are_letter_matrices(n, k, seed):
    """T[:, :, a] is the 0/1 matrix of letter a (columns = one-hot next states), cross-checked against the FSA."""
    rng = np.random.default_rng(seed)
    delta = rng.integers(0, n, size=(n, k))
    T = p4.one_hot_tensor(delta)
    for a in range(k):
        W = np.array(p4.w_of_input(T, [int(b == a) for b in range(k)]))
        for q in range(n):
            assert list(W[:, q]) == [int(i == delta[q, a]) for i in range(n)]


def test_bilinear_model_certifies_group_word_problem():
    from lrnnkit.automata.groups import group_word_problem
    fsa = group_word_problem("S3")
    cert = certify(p4.bilinear_model(fsa), fsa, float_steps=500)
    assert cert.certified and cert.float_check["mismatches"] == 0


def test_bfs_detects_a_wrong_tensor():
    """The independent BFS is able to fail: swap two slices."""
    delta = np.array([[1, 0], [0, 0]])
    T = p4.one_hot_tensor(delta)
    bad = [[[T[i][j][1 - a] for a in range(2)] for j in range(2)] for i in range(2)]
    assert p4.bfs_simulates(delta, 0, T)[0]
    assert not p4.bfs_simulates(delta, 0, bad)[0]


def test_rotation_model_float_long_words():
    """Z5 rotation model: 4 random words of 5000 steps in float64 agree with the automaton."""
    model, fsa = p4.rotation_model([5])
    rng = np.random.default_rng(0)
    words = rng.integers(0, 5, size=(4, 5000))
    res = run_float(model, words)
    got = np.asarray(model.output_labels, dtype=object)[res.outputs]
    want = np.asarray(fsa.outputs, dtype=object)[fsa.trace_batch(words)]
    assert (got == want).all()


def test_readout_lp_positive_controls():
    """The LP used for impossibility checks does find read-outs when they exist (so 'infeasible' means something)."""
    # parity with a = -1: states alternate in sign
    S = p4.diagonal_power_states(np.array([-1.0]), np.array([1.0]), 20)
    assert p4.readout_feasible(S, np.arange(1, 21) % 2, 2)
    # Z3 with a rotation block: states on a circle
    th = 2 * np.pi / 3
    S = np.array([[np.cos(k * th), np.sin(k * th)] for k in range(1, 31)])
    assert p4.readout_feasible(S, np.arange(1, 31) % 3, 3)
    # good parity coordinate in the random-network setting
    assert p4.parity_learnable(np.array([0.5, -0.3]), np.array([-0.7, 0.2]), 5) == (True, True)


def test_parity_hand_counterexample_exhaustive_thresholds():
    """H = 1, a = -1/2, b = 1/2: no threshold classifier sign(w h + c) is right on the words 0, 00, 1, 01."""
    pts = {"0": F(-1, 2), "00": F(1, 4), "1": F(1, 2), "01": F(-1, 4)}
    lab = {"0": 0, "00": 0, "1": 1, "01": 1}
    vals = sorted(pts.values())
    cuts = [vals[0] - 1] + [(x + y) / 2 for x, y in zip(vals, vals[1:])] + [vals[-1] + 1]
    for c in cuts:
        for sgn in (1, -1):
            assert any((sgn * (pts[w] - c) > 0) != bool(lab[w]) for w in pts)
    S, y = p4.parity_states(np.array([-0.5]), np.array([0.5]), np.array([1.0]), 4)
    assert not p4.readout_feasible(S, y, 2)


def test_clopper_pearson_against_scipy_binomtest():
    from scipy.stats import binomtest
    ci = binomtest(37, 120).proportion_ci(confidence_level=0.999, method="exact")
    lo, hi = p4.clopper_pearson(37, 120, 1e-3)
    assert abs(lo - ci.low) < 1e-9 and abs(hi - ci.high) < 1e-9


def test_orthogonal_rotation_form_reflection():
    """diag(1, -1) has det -1, a rotation block has det cos^2 + sin^2 = 1 (Pythagorean triple, exact)."""
    R = [[F(3, 5), F(-4, 5)], [F(4, 5), F(3, 5)]]
    assert det(R) == 1 and det([[F(1), F(0)], [F(0), F(-1)]]) == -1
    assert _eig_multiplicity([[F(1), F(0)], [F(0), F(-1)]], -1) == 1


@pytest.mark.gap
def test_abelian_decision_against_gap():
    """Commutativity of the group word problems used in 004:section-2.3.abelian-only, decided by GAP."""
    from lrnnkit.automata.groups import group_word_problem
    gap_names = {"S3": "SymmetricGroup(3)", "D4": "DihedralGroup(8)", "D5": "DihedralGroup(10)",
                 "A4": "AlternatingGroup(4)", "Z6": "CyclicGroup(6)", "Z2xZ4": "AbelianGroup([2,4])"}
    script = "".join(f"Print(IsAbelian({g}), \" \", Size({g}), \"\\n\");\n" for g in gap_names.values()) + "QUIT;\n"
    out = subprocess.run(["gap", "-q"], input=script, capture_output=True, text=True, timeout=120).stdout.split()
    for i, name in enumerate(gap_names):
        fsa = group_word_problem(name)
        assert (p4.noncommuting_pair(fsa) is None) == (out[2 * i] == "true")
        assert fsa.n_states == int(out[2 * i + 1])


def test_block_vs_full_witness_check_can_fail():
    """The perfectness test behind 004:hierarchy.block-vs-full tells a solvable group (S_3: commutator subgroup
    A_3 of order 3) from A_5 (perfect), and the free-block injectivity count detects a collision (a commuting pair)."""
    from lrnnkit.automata.groups import group_word_problem
    assert p4.transition_group_is_perfect(group_word_problem("S3")) == (6, 3)
    assert p4.transition_group_is_perfect(group_word_problem("A5")) == (60, 60)
    w, s = p4.free_block_injective(6)
    assert w == s == 2 ** 7 - 1
