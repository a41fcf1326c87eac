"""Targeted tests for the paper-000 statements (lrnnkit/theorems/paper_000/): the helpers of the checks against
independent oracles (lrnnkit.precision's exact cast, ml_dtypes, numpy), and the library constructions against the
recorded findings."""
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.theorems import all_statements, get
from lrnnkit.theorems import paper_000 as P
from lrnnkit.theorems._exact import dot, eye, gh_product, mv
from lrnnkit.theorems.paper_000.proposition_1 import _gh_float

EXPECTED = {"000:proposition-1.1", "000:proposition-1.2a", "000:proposition-1.2b", "000:proposition-1.2c",
            "000:proposition-1.2c-proof-swaps", "000:proposition-1.3a", "000:proposition-1.3b",
            "000:section-4.3-multi-token", "000:theorem-1", "000:theorem-2", "000:theorem-2.printed-index", "000:theorem-3", "000:theorem-4",
            "000:theorem-4.bounds", "000:theorem-4-proof-wiring", "000:theorem-5", "000:theorem-6",
            "000:section-4.2-rotation", "000:equation-3", "000:equation-4", "000:appendix-A.2",
            "000:proposition-1-consequence", "000:proposition-1.unit-interval-reading",
            "000:equation-5-inclusion", "000:appendix-D-identities",
            # proof errata: wrong proof steps of statements that hold
            "000:theorem-1-proof-unrolling", "000:theorem-1-proof-tail-count", "000:theorem-2-proof-jordan-signs",
            "000:theorem-2-proof-tail-count", "000:proposition-1.3a-proof-real-vectors",
            "000:theorem-3-proof-displaced-count", "000:theorem-6-proof-induction"}


def test_all_statements_registered():
    ids = {s.id for s in all_statements() if s.paper == "000"}
    assert EXPECTED <= ids


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=F(-10 ** 6), max_value=F(10 ** 6), max_denominator=10 ** 9),
       st.sampled_from(P.MODES))
def test_binary_format_matches_library_exact_cast(x, mode):
    # bf16 normal/subnormal range, no overflow (our cast saturates, the library follows IEEE overflow)
    from lrnnkit.precision.cast import cast_exact
    assert P.BF16.cast(x, mode) == F(cast_exact(x, "bf16", mode))


def test_theorem_1_counterexample_with_ml_dtypes():
    # independent oracle: ml_dtypes rounds float32 -> bfloat16 to nearest even; the exact values
    # 1 + 2^-8 + 2^-8 (-1/2)^c are float32 numbers for c <= 14
    ml = pytest.importorskip("ml_dtypes")
    for c in range(15):
        x = np.float32(1 + 2.0 ** -8 + 2.0 ** -8 * (-0.5) ** c)
        assert float(x) == 1 + 2.0 ** -8 + 2.0 ** -8 * (-0.5) ** c
        y = float(np.array(x).astype(ml.bfloat16))
        assert y == (1 + 2.0 ** -7 if c % 2 == 0 else 1.0)


def test_theorem_1_state_matches_closed_form():
    A = P.T1_A1
    H = P.T1_H0
    for c in range(40):
        assert H[0] == 1 + F(1, 2 ** 8) + F(1, 2 ** 8) * F(-1, 2) ** c
        H = mv(A, H)


def test_theorem_2_counterexample_with_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    H = P.T2_H0
    for k in range(14):
        x = np.float32(float(H[0]))
        assert F(float(x)) == H[0]            # exact in float32 for these k
        y = float(np.array(x).astype(ml.bfloat16))
        assert y == (1 + 2.0 ** -7 if k % 3 == 0 else 1.0)
        H = mv(P.T2_A1, H)


def test_theorem_2_eigenvalues_numpy():
    ev = np.linalg.eigvals(np.array([[float(x) for x in r] for r in P.T2_A1]))
    # tolerance 1e-12: a 3x3 eigenproblem with entries of size <= 1 is accurate to ~1e-15
    assert sorted(abs(ev))[0] == pytest.approx(0.5, abs=1e-12)
    assert max(abs(ev.imag)) > 0.4 and all(abs(e) < 1 or abs(e.imag) < 1e-12 for e in ev)


def test_prop_1_3b_counterexample_numpy():
    M = np.array([[float(x) for x in r] for r in gh_product(P.P13B_CE, 2)])
    ev = np.linalg.eigvals(M)
    # the exact discriminant is -4604/31640625, so |Im lambda| = sqrt(4604/31640625)/2 ~ 6.0e-3 >> 1e-12 round-off
    assert min(abs(ev.imag)) > 5e-3


@settings(max_examples=150, deadline=None)
@given(st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=7), min_size=2, max_size=5))
def test_schur_cohn_agrees_with_numpy(coeffs):
    p = [F(1)] + coeffs
    r = np.roots([float(c) for c in p])
    m = max(abs(r))
    if abs(m - 1) < 1e-6:           # too close to the circle for float roots to decide
        return
    assert P.schur_cohn_inside(p) == (m < 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=5), min_size=1, max_size=4))
def test_all_roots_real_agrees_with_numpy(coeffs):
    p = [F(1)] + coeffs
    r = np.roots([float(c) for c in p])
    im = max(abs(r.imag)) if len(r) else 0.0
    if 1e-9 < im < 1e-4:            # ill-conditioned (near-multiple) roots: numpy cannot decide
        return
    assert P.all_roots_real(p) == (im <= 1e-9)


def test_householder_reduction_float_random():
    rng = np.random.default_rng(1)
    for n in range(1, 6):
        Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
        ws = P.householder_factors(Q.tolist(), exact=False)
        R = np.eye(n)
        for w in ws:
            R = R @ _gh_float(2.0, w)
        assert len(ws) <= n
        assert np.abs(R - Q).max() < 1e-10   # float64 Householder products are backward stable (~1e-15)


def test_theorem_4_library_agrees():
    # the library keeps the printed wiring as a separate construction: it must fail where our check says so
    from lrnnkit.automata.sources import load_source
    from lrnnkit.certify import certify
    from lrnnkit.constructions import registry as R
    fsa = load_source("even-pairs")
    assert certify(R.compile(fsa, "krohn-rhodes"), float_steps=0).certified
    assert not certify(R.compile(fsa, "krohn-rhodes-as-printed"), float_steps=0).certified


def test_theorem_6_float_long_words():
    # float64 simulation of the printed two-layer reflection construction on long random words
    rng = np.random.default_rng(0)
    for m in (3, 5, 7):
        c0 = np.array([np.cos(np.pi / m), np.sin(np.pi / m)])
        R = lambda a: np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        H = lambda a: np.array([[np.cos(a), np.sin(a)], [np.sin(a), -np.cos(a)]])
        C = [R(-2 * i * np.pi / m) @ c0 for i in range(m)]
        D = [R(2 * i * np.pi / m) @ np.array([1.0, 0.0]) for i in range(m)]
        h, y = np.array([1.0, 0.0]), 0
        for t, x in enumerate(rng.integers(0, m, size=3000), start=1):
            th = (1 - 2 * x) * np.pi / m if t % 2 else (2 * x + 1) * np.pi / m
            h = H(th) @ h
            y = (y + x) % m
            scores = [max(C[i] @ h, D[i] @ h) for i in range(m)]
            assert int(np.argmax(scores)) == y


def test_recorded_counterexamples_are_minimal_shapes():
    assert get("000:proposition-1.3b").counterexample["k"] == 3
    assert get("000:proposition-1.2c-proof-swaps").counterexample["n"] == 2


def _proof_policy_model(A1, H0, fsa, W, c, labels):
    from lrnnkit.model import Decoder, Layer, Model, TableMap, Transition
    n = len(H0)
    z = [F(0)] * n
    letters = list(fsa.alphabet)
    mats = [A1] if len(letters) == 1 else [eye(n), A1]
    trans = [Transition.from_exact([list(r) for r in A], z) for A in mats]
    dec = Decoder.exact(W, c, labels)
    L = Layer("dense", n, trans, np.array([float(x) for x in H0]), TableMap.identity("input", len(letters)), dec,
              list(H0), labels, [f"h{i}" for i in range(n)], "cex")
    prov = {"construction": "cex", "paper": "000", "statement": "Theorem 1/2", "automaton": fsa.to_dict(),
            "automaton_hash": fsa.content_hash()}
    return Model(letters, [L], TableMap.identity(0, len(labels)), labels, "cex", prov)


def test_theorem_1_counterexample_library_proof_policy():
    # lrnnkit.precision implements the paper's cast model independently (policy "proof"): no wrong output
    from lrnnkit.automata.fsa import FSA
    from lrnnkit.precision.simulate import collapse
    fsa = FSA(("0", "1"), [[0, 1], [1, 0]], 0, None, ("0", "1"), None, "parity")
    thr = 1 + F(1, 2 ** 8)
    M = _proof_policy_model(P.T1_A1, P.T1_H0, fsa, [[1, 0], [-1, 0]], [-thr, thr], ["0", "1"])
    assert collapse(M, "bf16", "proof", steps=400, prefix=[], cycle=["1"]).first_wrong_step is None
    assert collapse(M, "bf16", "proof", steps=300, seed=1).first_wrong_step is None
    # control: the same construction with the eigenvalue +1/2 (allowed by Theorem 1) fails at once
    A_pos = ((F(1), F(-1, 2)), (F(0), F(1, 2)))
    M2 = _proof_policy_model(A_pos, P.T1_H0, fsa, [[1, 0], [-1, 0]], [-thr, thr], ["0", "1"])
    assert collapse(M2, "bf16", "proof", steps=50, prefix=[], cycle=["1"]).first_wrong_step == 1


def test_theorem_2_counterexample_library_proof_policy():
    from lrnnkit.automata.fsa import FSA
    from lrnnkit.precision.simulate import collapse
    fsa = FSA(("1",), [[1], [2], [0]], 0, frozenset({0}), None, None, "(111)*")
    thr = 1 + F(1, 2 ** 8)
    M = _proof_policy_model(P.T2_A1, P.T2_H0, fsa, [[1, 0, 0], [-1, 0, 0]], [-thr, thr], ["1", "0"])
    assert collapse(M, "bf16", "proof", steps=400).first_wrong_step is None


def test_unit_interval_k3_counter_independent_oracles():
    # sympy: the characteristic polynomial is (x - 1)(x^2 + (2/99) x + (2/99)^2), so the non-real pair is
    # (2/99) e^{+-2 pi i/3}; lrnnkit.precision's exact cast and ml_dtypes: bf16 round-to-nearest-even of the first
    # coordinate. ml_dtypes converts through float32 (spacing 2^-23 near 1), which keeps the side of the midpoint
    # only while |x_k| > 2^-24: k <= 2 here (x_3 = (2/99)^3 2^-8 ~ 3e-8 is rounded onto the midpoint first).
    import sympy
    from lrnnkit.precision.cast import cast_exact
    A = gh_product(P.UNIT_K3_FACTORS, 3)
    x = sympy.Symbol("x")
    S = sympy.Matrix([[sympy.Rational(a.numerator, a.denominator) for a in r] for r in A])
    r = sympy.Rational(2, 99)
    assert sympy.expand(S.charpoly(x).as_expr() - (x - 1) * (x ** 2 + r * x + r ** 2)) == 0
    assert all(dot(u, u) > 0 and 0 <= b <= 1 for b, u in P.UNIT_K3_FACTORS)
    ml = pytest.importorskip("ml_dtypes")
    H = P.UNIT_K3_H0
    for k in range(40):
        want = 1 + F(1, 2 ** 7) if k % 3 == 0 else F(1)
        assert F(cast_exact(H[0], "bf16", "nearest-even")) == want, k
        if k <= 2:
            assert float(np.array(np.float32(float(H[0]))).astype(ml.bfloat16)) == want, k
        H = mv(A, H)


def test_unit_interval_k3_counter_library_proof_policy():
    # lrnnkit.precision's own implementation of the paper's cast model agrees: no wrong output on 1^k
    from lrnnkit.automata.fsa import FSA
    from lrnnkit.precision.simulate import collapse
    fsa = FSA(("1",), [[1], [2], [0]], 0, frozenset({0}), None, None, "(111)*")
    thr = 1 + F(1, 2 ** 8)
    A = gh_product(P.UNIT_K3_FACTORS, 3)
    M = _proof_policy_model(A, P.UNIT_K3_H0, fsa, [[1, 0, 0], [-1, 0, 0]], [-thr, thr], ["1", "0"])
    assert collapse(M, "bf16", "proof", steps=120).first_wrong_step is None


@pytest.mark.slow
def test_deep_profile_000():
    from lrnnkit.theorems import run_check
    for sid in sorted(EXPECTED):
        assert run_check(sid, "deep").verdict == get(sid).verdict, sid


def test_appendix_d_identities_float_random_angles():
    rng = np.random.default_rng(5)
    R = lambda a: np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    H = lambda a: np.array([[np.cos(a), np.sin(a)], [np.sin(a), -np.cos(a)]])
    for a, g in rng.uniform(-10, 10, size=(200, 2)):
        # 1e-12: products of two 2x2 matrices with O(1) entries, float64 round-off ~1e-15
        assert np.allclose(R(a) @ R(g), R(a + g), atol=1e-12)
        assert np.allclose(H(a) @ H(g), R(a - g), atol=1e-12)
        assert np.allclose(R(a) @ H(g), H(a + g), atol=1e-12)
        assert np.allclose(H(g) @ R(a), H(g - a), atol=1e-12)


def test_transient_wobble_before_saturation_is_not_a_counterexample():
    """Regression: a deep search flagged this one-layer LRNN (eigenvalues 1/4 and a Jordan block at 1, 8-bit
    saturating format) because its cast state wobbles on [80, 160]; it saturates to a constant at k = 94 and so
    recognizes nothing. The corrected-statement search must not count it; the recorded bf16 counterexample must
    still count."""
    from fractions import Fraction as Fr
    import lrnnkit.theorems.paper_000 as P0
    A = ((Fr(1, 4), Fr(0), Fr(0)), (Fr(-3, 2), Fr(3, 2), Fr(1, 2)), (Fr(3, 8), Fr(-1, 2), Fr(1, 2)))
    B = (Fr(0), Fr(9, 8), Fr(-1))
    H0 = (Fr(1), Fr(1, 32), Fr(-5, 4))
    st = P0.cast_model_states(A, B, H0, 640, P0.TOY8, "nearest-even")
    assert not P0.tail_monotone(st[:161], 1, 80)        # the screen flags it ...
    assert all(s == st[94] for s in st[94:])            # ... but it is constant from k = 94 on
    assert P0.tail_monotone(st, 1, 320) and not P0.separates(st, 2, 320)
    good = P0.cast_model_states(P0.T1_A1, (Fr(0), Fr(0)), P0.T1_H0, 640, P0.BF16, "nearest-even")
    assert not P0.tail_monotone(good, 1, 320) and P0.separates(good, 2, 0)


def test_theorem_5_cascade_check_can_fail():
    """The brute-force cascade check behind 000:theorem-5 / 000:theorem-4.bounds rejects a lift that is not
    permutation-reset level by level, and one that does not commute with W."""
    states, encode, lifts, W = P.s4_idempotent_cascade()
    assert P.cascade_check(states, encode, lifts, W, P.S4_IDEMPOTENT) is None
    f = P.S4_IDEMPOTENT[2]
    naive = list(lifts)
    naive[2] = lambda x: (f[x[0]], f[x[1]] if f[x[1]] != f[x[0]] else 3 - f[x[0]])   # a valid lift, not PR
    assert "neither a permutation nor a reset" in P.cascade_check(states, encode, naive, W, P.S4_IDEMPOTENT)
    wrong = list(lifts)
    wrong[0] = lambda x: (x[1], x[0])
    assert "W(lift(x)) != f(W(x))" in P.cascade_check(states, encode, wrong, W, P.S4_IDEMPOTENT)


def test_theorem_4_brute_force_detects_the_printed_wiring():
    """The certifier-independent check behind 000:theorem-4 finds the printed wiring's error on even-pairs (the
    'krohn-rhodes-as-printed' construction) and accepts the corrected one."""
    from lrnnkit.automata.sources import load_source
    from lrnnkit.constructions import registry as R
    fsa = load_source("even-pairs")
    n, bad = P.brute_force_agrees(R.compile(fsa, "krohn-rhodes-as-printed"), fsa, 4)
    assert bad is not None and len(bad["word"]) <= 4
    n, bad = P.brute_force_agrees(R.compile(fsa, "krohn-rhodes"), fsa, 4)
    assert bad is None and n == sum(len(fsa.alphabet) ** k for k in range(5))


ERRATA = ["000:theorem-1-proof-unrolling", "000:theorem-1-proof-tail-count", "000:theorem-2-proof-jordan-signs",
          "000:theorem-2-proof-tail-count", "000:proposition-1.3a-proof-real-vectors",
          "000:theorem-3-proof-displaced-count", "000:theorem-6-proof-induction", "003:theorem-2.2-proof-eigenvalues",
          "003:theorem-2.1-proof-neumann"]


@pytest.mark.parametrize("sid", ERRATA)
def test_proof_errata_record_the_instance_their_check_finds(sid):
    """A proof-erratum entry states the printed step, so it is holds-as-corrected (not holds): the check finds the
    printed step false on exactly the recorded instance and reports the recorded correction."""
    from lrnnkit.theorems.registry import run_check
    s, r = get(sid), run_check(sid, "quick")
    assert s.verdict == r.verdict == "holds-as-corrected"
    assert r.counterexample == s.counterexample and r.corrected == s.corrected


def test_wording_slip_entries_record_the_literal_counterexample_and_the_intended_statement():
    """003, App. G: 'the total number of admissible pairings is (4m)!!' is literally false (1 and 3 pairings for
    m = 1, not 8) but the proof needs only the upper bound, which holds: a wording slip, not a false step."""
    from lrnnkit.theorems.registry import run_check
    s, r = get("003:proposition-G.2-proof-pairings"), run_check("003:proposition-G.2-proof-pairings", "quick")
    assert s.verdict == r.verdict == "holds-with-wording-slip"
    assert r.counterexample == s.counterexample and r.corrected == s.corrected


def test_proof_errata_printed_steps_are_false_by_hand():
    """Hand-computed values of the printed steps (000, App. B.1 unrolling; App. B.2 Jordan signs and tails)."""
    from lrnnkit.theorems.paper_000 import proof_errata as E
    half = ((F(1, 2),),)
    assert E._unrolled([half], [(F(1),)], (F(0),), 0) == (F(0),)        # printed (upto k - 1): H_1 = 0, true 1
    assert E._unrolled_true([half], [(F(1),)], (F(0),)) == (F(1),)
    assert E._jordan_power(F(-1), 2, 4)[0][1] == -4                           # z_{2k} = -2k, printed +infinity
    C, D, _ = P.cast_model_terms(((F(-1),),), (F(1),), (F(1),), 20, P.TOY8, "nearest-even")
    for k in range(1, 8):
        assert E._thm2_printed(C, D, 0, k) == ((F(k + 1),), (F(-k),))          # model: (1,), (0,)
        assert E._thm2_corrected(C, D, 0, k) == ((F(1),), (F(0),))


def test_theorem_2_as_printed_is_refuted_by_the_theorem_6_network():
    """000 Theorem 2 with the printed index 2^i - 1: the m = 3 network of Theorem 6 counts modulo 3 while no layer's
    product of 2^i - 1 matrices has a non-real eigenvalue. Independent float check (numpy, float64): eigenvalues of
    every product of three layer-2 matrices have imaginary parts below 1e-9 (exact value 0; the non-real ones of two
    reflections have |Im| = sin(2 pi/3) ~ 0.87), and the float network's decoded output (argmax over the 2m
    directions c_i, d_i of App. D) is [k mod 3 = 0] for k < 600."""
    import itertools
    from lrnnkit.exact import to_float
    r = P.check_theorem_2_printed_index("quick")
    assert r.verdict == "falsified" and get("000:theorem-2.printed-index").verdict == "falsified"
    assert P.check_theorem_2_printed_index("quick", index="2^(i-1)").verdict == "open"
    layer2 = {k: np.array([[to_float(x) for x in row] for row in A]) for k, A in P.theorem_6_layer2(3).items()}
    mats = list(layer2.values())
    for a, b, c in itertools.product(mats, repeat=3):
        assert np.abs(np.linalg.eigvals(a @ b @ c).imag).max() < 1e-9
    assert max(np.abs(np.linalg.eigvals(a @ b).imag).max() for a, b in itertools.product(mats, repeat=2)) > 0.8
    ang = [2 * np.pi * i / 3 for i in range(3)]
    d = [np.array([np.cos(t), np.sin(t)]) for t in ang]
    c = [np.array([np.cos(np.pi / 3 - t), np.sin(np.pi / 3 - t)]) for t in ang]
    h1, h2 = 0, np.array([1.0, 0.0])
    for k in range(1, 600):
        h1 = -h1 + 1
        h2 = layer2[(1, h1)] @ h2
        y = max(range(3), key=lambda i: max(c[i] @ h2, d[i] @ h2))
        assert (y == 0) == (k % 3 == 0), k


def test_theorem_4_inside_equation_1_needs_a_delay_layer():
    """000 Theorem 4 inside eq. (1) (no token shift between layers): the delay layer's matrix, built in floats from
    its two GH factors, is the shift [[0, 0], [1, 0]]; with it a two-level cascade is reproduced, without it (the
    printed wiring) not; the three entries say so: the wiring check's corrected branch is the eq. (1) network (not
    the cascade compared with itself), Theorem 4's perturbation is the missing delay layer, the bounds are open
    inside eq. (1)."""
    from lrnnkit.theorems.paper_000.theorem_4_5 import EQ1_FACTORS, eq1_cascade_states
    S = np.eye(2)
    for beta, v in EQ1_FACTORS["shift"]:
        v = np.array([float(x) for x in v])
        S = S @ (np.eye(2) - beta * np.outer(v, v) / (v @ v))
    assert np.allclose(S, [[0, 0], [1, 0]], atol=1e-15)
    top, bottom = {0: [1, 1]}, {(0, 0): [1, 0], (1, 0): [0, 1]}     # the recorded one-letter counterexample
    assert eq1_cascade_states(top, bottom, [0], delay=True) == [(1, 1)]
    assert eq1_cascade_states(top, bottom, [0], delay=False) == [(1, 0)]
    assert P.check_theorem_4_wiring("quick", delay=False).verdict == "falsified"
    assert get("000:theorem-4").perturb == {"delay_layers": False}
    assert P.check_theorem_4("quick", delay_layers=False).verdict == "falsified"
    b = get("000:theorem-4.bounds")
    assert b.verdict == "open" and "inside eq. (1)" in b.evidence and "remains open" in b.evidence
    assert "delay layer" in get("000:theorem-4").evidence and "delay layer" in get("000:theorem-4-proof-wiring").corrected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.fractions(0, 1, max_denominator=9),
                          st.lists(st.integers(-4, 4), min_size=3, max_size=3).filter(any)), min_size=1, max_size=2))
def test_two_unit_interval_factors_have_nonnegative_real_spectra(factors):
    """The lemma behind 000's consequence of Proposition 1 at its true strength (k <= 2, any number of layers,
    monotone cast): a product of <= 2 GH factors with eigenvalues in [0, 1] has only non-negative real eigenvalues.
    The exact decision (:func:`nonneg_real_spectrum`) against numpy's eigenvalues (float64; 1e-7 covers the
    rounding of a double eigenvalue, which splits by up to ~sqrt(eps))."""
    from lrnnkit.theorems.paper_000.proposition_1 import nonneg_real_spectrum
    exact = [(b, tuple(F(x) for x in v)) for b, v in factors]
    assert nonneg_real_spectrum(gh_product(exact, 3))
    M = np.eye(3)
    for b, v in exact:
        v = np.array([float(x) for x in v])
        M = M @ (np.eye(3) - float(b) * np.outer(v, v) / (v @ v))
    ev = np.linalg.eigvals(M)
    assert np.all(np.abs(ev.imag) < 1e-7) and np.all(ev.real > -1e-7)


def test_consequence_of_proposition_1_at_its_true_strength():
    """k <= 2 with a monotone cast excludes counting for any number of layers (the corrected statement, not
    k 2^{i-1} <= 2 per layer); the unit-interval reading, recorded holds-as-corrected like Theorems 1 and 2, says its
    three-factors argument through Theorem 2 covers one layer; three factors break the lemma (the k = 3 instance)."""
    from lrnnkit.theorems.paper_000.proposition_1 import nonneg_real_spectrum, two_factor_spectra
    assert not nonneg_real_spectrum(gh_product(P.UNIT_K3_FACTORS, 3))
    assert not nonneg_real_spectrum(gh_product([(F(2), (F(1), F(0)))], 2))      # beta = 2: eigenvalue -1
    assert two_factor_spectra("quick", 2) is None and two_factor_spectra("quick", 3)[1] == P.UNIT_K3_FACTORS
    c = get("000:proposition-1-consequence")
    assert "any number of layers" in c.corrected and "k 2^{i-1}" not in c.corrected
    u = get("000:proposition-1.unit-interval-reading")
    assert u.verdict == "holds-as-corrected" and "covers one layer only" in u.evidence
    assert P.check_prop1_consequence_unit_interval("quick", kmax=3).verdict == "falsified"
