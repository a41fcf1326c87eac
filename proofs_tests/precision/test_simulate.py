"""The finite-precision executor (lrnnkit.precision.policy / simulate / proof_model): cast-policy semantics against an
exact reference, numpy and pure-Python paths bit-identical, exact period detection, the collapse test, and the
impossibility theorems of paper 000 (Theorems 1 and 2) as properties."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.executor import run_float
from lrnnkit.model import Decoder, GHFactor, Layer, Model, TableMap, Transition
from lrnnkit.precision.cast import cast, cast_exact
from lrnnkit.precision.demo_models import (counter_fsa, counter_real, counter_rotation, deltanet_model,
                                           diagonal_layer_model, parity_fsa, parity_scalar, two_layer_period4)
from lrnnkit.precision.policy import LayerKernel, ProofLayer, Rounder
from lrnnkit.precision.proof_model import proof_constant_input
from lrnnkit.precision.simulate import EventuallyPeriodic, Simulator, collapse

MODES = ["nearest-even", "nearest-away", "toward-zero", "toward-positive", "toward-negative", "to-odd"]


def _random_layer(rng, kind: str, d: int, S: int) -> Layer:
    trans = []
    for _ in range(S):
        if kind == "diagonal":
            a = rng.uniform(-1, 1, d)
            t = Transition(np.diag(a), rng.standard_normal(d) * 0.3)
            t.diag = a
            trans.append(t)
        else:
            trans.append(Transition(rng.standard_normal((d, d)) * 0.6, rng.standard_normal(d) * 0.3))
    n_out = 3
    dec = Decoder(rng.standard_normal((n_out, d)), rng.standard_normal(n_out) * 0.1, ["a", "b", "c"])
    return Layer(kind, d, trans, rng.standard_normal(d), TableMap.identity("input", S), dec)


def _nonzero_u(rng, d):
    while True:
        u = [int(x) for x in rng.integers(-3, 4, d)]
        if any(u):
            return u


def _gh_layer(rng, d, S):
    trans = []
    for _ in range(S):
        fs = [GHFactor.exact(Fraction(int(rng.integers(0, 9)), 4), _nonzero_u(rng, d)) for _ in range(2)]
        trans.append(Transition.from_factors(fs, d, B=rng.standard_normal(d) * 0.3))
    dec = Decoder(rng.standard_normal((3, d)), rng.standard_normal(3) * 0.1, ["a", "b", "c"])
    return Layer("gh", d, trans, rng.standard_normal(d), TableMap.identity("input", S), dec)


def _layers(seed):
    rng = np.random.default_rng(seed)
    return [_random_layer(rng, "dense", 3, 2), _random_layer(rng, "diagonal", 4, 2), _gh_layer(rng, 3, 2)]


# ---------------------------------------------------------------- policy semantics vs an exact reference
class _ExactOps:
    """IEEE semantics written with Fractions: the exact result of a finite operation, then the exact cast; operations
    with an infinite or NaN operand follow float64 (where IEEE arithmetic on inf / NaN is exact)."""

    def __init__(self, fmt, mode):
        self.fmt, self.mode = fmt, mode

    def fl(self, q) -> float:
        return cast_exact(q, self.fmt, self.mode)

    def mul(self, a: float, b: float) -> float:
        if np.isfinite(a) and np.isfinite(b):
            return self.fl(Fraction(a) * Fraction(b))
        return self.fl(float(a) * float(b))

    def add(self, a: float, b: float) -> float:
        if np.isfinite(a) and np.isfinite(b):
            return self.fl(Fraction(a) + Fraction(b))
        return self.fl(float(a) + float(b))


def _ref_dot_op(row, h, X):
    acc = X.mul(row[0], h[0])
    for a, x in zip(row[1:], h[1:]):
        acc = X.add(acc, X.mul(a, x))
    return acc


def _ref_step_op(K: LayerKernel, h, s, X):
    """The op policy written with the exact operations of _ExactOps."""
    if K.mode == "diag":
        return [X.add(X.mul(a, x), b) for a, x, b in zip(K.diag[s], h, K.B[s])]
    if K.mode == "gh":
        for k in range(K.nf):
            g, v = K.fcoef[s, k], K.fkey[s, k]
            if g == 0:
                continue
            sig = _ref_dot_op(v, h, X)
            gg = X.mul(g, sig)
            h = [X.add(x, -X.mul(gg, vi)) for x, vi in zip(h, v)]
        return [X.add(x, b) for x, b in zip(h, K.B[s])]
    return [X.add(_ref_dot_op(row, h, X), b) for row, b in zip(K.A[s], K.B[s])]


@pytest.mark.parametrize("fmt", ["fp8-e4m3-ieee", "e3m2", "bf16", "e4m5-ftz", "fp8-e4m3fnuz", "fp6-e2m3fn"])
@pytest.mark.parametrize("mode", MODES)
def test_op_policy_is_correctly_rounded_per_operation(fmt, mode):
    """Under the op policy every product and sum is the exact rounding of the exact result (checked against Fraction
    arithmetic + the exact cast), for dense, diagonal and GH layers, in every deterministic mode; the pure-Python and
    numpy paths give the same bits."""
    rng = np.random.default_rng(5)
    X = _ExactOps(fmt, mode)
    for L in _layers(11):
        K = LayerKernel(L, Rounder(fmt, mode), "op")
        for _ in range(25):
            h = cast(rng.standard_normal(L.width) * np.ldexp(1.0, int(rng.integers(-8, 4))), fmt, mode)
            s = int(rng.integers(0, L.n_symbols))
            ref = _ref_step_op(K, list(h), s, X)
            one = K.step1(list(h), s)
            batch = K.step(h[None, :], np.array([s]))[0]
            assert np.array_equal(np.array(one), np.array(ref), equal_nan=True), (L.kind, one, ref)
            assert np.array_equal(batch.view(np.uint64), np.array(one).view(np.uint64))


@pytest.mark.parametrize("policy", ["op", "matvec"])
@pytest.mark.parametrize("mode", MODES)
def test_numpy_and_python_paths_bit_identical(policy, mode):
    """The batch (numpy) path and the memoized pure-Python path compute the same states and outputs, step by step."""
    rng = np.random.default_rng(17)
    for fmt in ("fp8-e5m2", "e5m7", "fp16"):
        for L in _layers(3):
            K = LayerKernel(L, Rounder(fmt, mode), policy)
            H = np.tile(K.H0, (4, 1))
            hs = [list(K.H0) for _ in range(4)]
            for t in range(30):
                s = rng.integers(0, L.n_symbols, 4)
                H = K.step(H, s)
                y = K.decode(H, s)
                for b in range(4):
                    hs[b] = K.step1(hs[b], int(s[b]))
                    assert np.array_equal(np.array(hs[b]).view(np.uint64), H[b].view(np.uint64))
                    assert K.decode1(hs[b], int(s[b])) == y[b]


def test_matvec_policy_definition():
    """matvec: fl(fl(float64 left-to-right A H) + B) with weights stored in the format."""
    rng = np.random.default_rng(2)
    L = _layers(4)[0]
    K = LayerKernel(L, Rounder("bf16"), "matvec")
    h = cast(rng.standard_normal(3), "bf16")
    A = cast(L.transitions[1].A, "bf16")
    B = cast(L.transitions[1].B, "bf16")
    acc = A[:, 0] * h[0] + A[:, 1] * h[1] + A[:, 2] * h[2]
    want = [cast_exact(Fraction(float(cast(np.array([a]), "bf16")[0])) + Fraction(b), "bf16") for a, b in zip(acc, B)]
    assert K.step1(list(h), 1) == want


# ---------------------------------------------------------------- executor semantics
def test_fp64_matvec_matches_float64_reference_executor():
    """In fp64 the matvec policy of a dense layer is float64 arithmetic: outputs equal lrnnkit.executor.run_float."""
    rng = np.random.default_rng(8)
    L = _layers(6)[0]
    m = Model(["x", "y"], [L], TableMap.identity(0, 3), ["a", "b", "c"])
    words = rng.integers(0, 2, (6, 40))
    ours = Simulator(m, "fp64", policy="matvec").run(words).outputs
    ref = run_float(m, words).outputs
    assert (ours == ref).mean() > 0.95   # float64 summation order may differ from einsum in the last bit
    # the exactly representable parity model agrees exactly in every format
    p = parity_scalar("-1")
    w = rng.integers(0, 2, (5, 60))
    for fmt in ("fp4-e2m1", "fp8-e4m3-ieee", "bf16"):
        assert np.array_equal(Simulator(p, fmt, policy="op").run(w).outputs, run_float(p, w).outputs)


def test_memoized_single_run_equals_batch_run():
    rng = np.random.default_rng(9)
    for m in (counter_rotation(7), two_layer_period4(), parity_scalar("-1")):
        w = rng.integers(0, len(m.alphabet), 120)
        for fmt in ("fp8-e4m3-ieee", "bf16"):
            sim = Simulator(m, fmt, policy="op")
            assert np.array_equal(sim.run_single(w).outputs, sim.run(w[None, :]).outputs)


def test_period_detection_is_exact():
    """(pre-period, period) from state hashing equals a brute-force check on the explicit trajectory: the states
    repeat with that period from mu on, mu is minimal, and no smaller period works."""
    for m, fmt, pol in ((counter_rotation(5), "fp8-e4m3-ieee", "matvec"), (counter_rotation(5), "bf16", "op"),
                        (counter_real(3), "bf16", "op"), (deltanet_model("2"), "fp4-e2m1", "op")):
        sim = Simulator(m, fmt, policy=pol)
        mu, lam = sim.run_sequence(EventuallyPeriodic(np.array([0]), 0, 1))["layer_periods"][0]
        T = mu + 3 * lam + 5
        st_ = sim.run(np.zeros((1, T), dtype=np.int64), keep_states=True).states[0][0]
        H = np.vstack([sim.kernels[0].H0[None, :], st_])   # H[k] = state after k symbols
        same = lambda i, j: np.array_equal(H[i].view(np.uint64), H[j].view(np.uint64))  # noqa: E731
        assert all(same(k, k + lam) for k in range(mu, T + 1 - lam))
        if mu > 0:
            assert not same(mu - 1, mu - 1 + lam)
        for p in range(1, lam):
            assert not all(same(k, k + p) for k in range(mu, T + 1 - p))


def test_collapse_exact_for_all_lengths_matches_long_run():
    """The periodic-input verdict (computed from the periods) equals the first mismatch on a long explicit run."""
    for m, fmt, pol in ((counter_rotation(5), "fp8-e4m3-ieee", "op"), (counter_rotation(7), "fp8-e5m2", "matvec"),
                        (counter_rotation(5), "bf16", "op")):
        c = collapse(m, fmt, pol, steps=10, cycle=["1"], prefix=[])
        assert c.exact_for_all_lengths
        T = 500
        out = Simulator(m, fmt, policy=pol).run(np.zeros((1, T), dtype=np.int64)).labels()[0]
        fsa = counter_fsa(int(m.output_labels[-1]) + 1)
        want = np.array(fsa.output_trace([0] * T), dtype=object)
        bad = np.nonzero(out != want)[0]
        assert (c.first_wrong_step is None and len(bad) == 0) or c.first_wrong_step == bad[0] + 1


def test_collapse_random_word_and_errors():
    m = parity_scalar("-1")
    r = collapse(m, "fp4-e2m1", "op", steps=500)
    assert r.first_wrong_step is None and not r.exact_for_all_lengths and r.steps == 500
    r = collapse(parity_scalar("1/2"), "bf16", "matvec", steps=500, word="0 0 1 1")
    assert r.first_wrong_step == 3   # H = 1/2 > 0 decodes "0" after one "1"; decoding as if no 1 was read
    with pytest.raises(InputError, match="unknown cast policy"):
        collapse(m, "bf16", "sometimes")
    with pytest.raises(InputError, match="unknown number format"):
        collapse(m, "fp12", "op")
    with pytest.raises(InputError, match="unknown symbol"):
        collapse(m, "bf16", "op", word="0 2")
    with pytest.raises(SizeLimitError):
        collapse(counter_rotation(5), "fp32", "matvec", cycle=["1"], prefix=[], period_cap=50)


def test_stochastic_rounding_runs_without_memo():
    m = counter_rotation(5)
    r1 = collapse(m, "bf16", "matvec", 300, "stochastic", word=["1"] * 300, seed=1)
    r2 = collapse(m, "bf16", "matvec", 300, "stochastic", word=["1"] * 300, seed=1)
    assert r1.first_wrong_step == r2.first_wrong_step and not r1.exact_for_all_lengths


# ---------------------------------------------------------------- the proof model
def test_proof_policy_executor_matches_its_formula():
    """The proof policy's state is fl(sum_i fl(P_i B) + fl(P_0 H0)) computed exactly; for a scalar layer the terms are
    a^i b, so the state can be written down directly."""
    m = diagonal_layer_model(["3/4"], ["1/3"], h0=["1/5"])
    P = ProofLayer(m.layers[0], Rounder("e4m3"))
    for k in range(1, 30):
        h = P.step(0)[0]
        terms = sum((Fraction(cast_exact(Fraction(3, 4) ** i * Fraction(1, 3), "e4m3")) for i in range(k)),
                    Fraction(0))
        want = cast_exact(terms + Fraction(cast_exact(Fraction(3, 4) ** k * Fraction(1, 5), "e4m3")), "e4m3")
        assert h == want


@pytest.mark.parametrize("model,sym", [(diagonal_layer_model(["1/2", "15/16"], [1, 1]), 0), (deltanet_model("1/2"), 0),
                                       (parity_scalar("-1"), 1), (counter_real(3), 0), (deltanet_model("2"), 0)])
@pytest.mark.parametrize("fmt", ["fp8-e4m3-ieee", "bf16", "e3m2"])
def test_proof_constant_input_closed_form_matches_direct_evaluation(model, sym, fmt):
    """The exact extrapolation (pre-period, period) agrees with the direct O(k) proof-policy evaluation."""
    r = proof_constant_input(model.layers[0], fmt, symbol=sym)
    P = ProofLayer(model.layers[0], Rounder(fmt))
    K = r.pre_period + 2 * r.period + 4
    if K > 1500:
        pytest.skip("pre-period too long for the direct check")
    hs = [list(P.state)] + [list(P.step(sym)) for _ in range(K)]
    eq = lambda a, b: np.array_equal(np.array(a), np.array(b), equal_nan=True)  # noqa: E731
    assert all(eq(hs[k], hs[k + r.period]) for k in range(r.pre_period, K + 1 - r.period))
    if r.pre_period:
        assert not eq(hs[r.pre_period - 1], hs[r.pre_period - 1 + r.period])


def test_proof_model_counting_stalls_only_at_overflow():
    """Counting (a = 1, B = 1) in the proof model: the exact sum k is cast once, so the state changes until k
    overflows the format (fp8-e4m3-ieee: max 240, so from k = 248 = 240 + half an ulp (16) / 2 rounds to inf)."""
    m = diagonal_layer_model(["1"], [1], name="counting")
    r = proof_constant_input(m.layers[0], "fp8-e4m3-ieee")
    assert r.period == 1 and r.final[0][0] == np.inf and r.pre_period == 248
    # a recurrence rounds after every step and stalls at 2^(m+1) = 16 instead
    sim = Simulator(m, "fp8-e4m3-ieee", policy="op")
    assert sim.run_sequence(EventuallyPeriodic(np.array([0]), 0, 1))["layer_periods"][0] == (16, 1)


# ---------------------------------------------------------------- the theorems as properties
rationals01 = st.fractions(min_value=0, max_value=1, max_denominator=64)


@settings(max_examples=25, deadline=None)
@given(a=st.lists(rationals01, min_size=1, max_size=3), b=st.lists(st.fractions(-4, 4, max_denominator=16),
                                                                       min_size=3, max_size=3),
       fmt=st.sampled_from(["fp8-e4m3-ieee", "fp8-e5m2", "e3m2", "fp4-e2m1", "e4m5", "bf16"]),
       policy=st.sampled_from(["op", "matvec", "proof"]))
def test_theorem1_spectrum_in_0_1_state_becomes_constant(a, b, fmt, policy):
    """000, Theorem 1 (proof B.1): with A(1) diagonal with entries in [0, 1], the finite-precision state on 1^k is
    eventually constant (period 1), under every cast policy."""
    m = diagonal_layer_model([str(x) for x in a], [str(x) for x in b[: len(a)]])
    if policy == "proof":
        r = proof_constant_input(m.layers[0], fmt)
        assert r.period == 1
        return
    sim = Simulator(m, fmt, policy=policy)
    try:
        mu, lam = sim.run_sequence(EventuallyPeriodic(np.array([0]), 0, 1), 300_000)["layer_periods"][0]
    except SizeLimitError:
        pytest.skip("no period within the cap (slow counting in a wide format)")
    assert lam == 1


@settings(max_examples=25, deadline=None)
@given(beta=st.fractions(0, 1, max_denominator=32), key=st.lists(st.integers(-4, 4), min_size=2, max_size=3),
       fmt=st.sampled_from(["fp8-e4m3-ieee", "e3m2", "bf16", "fp16"]))
def test_theorem1_deltanet_beta_in_0_1_proof_model(beta, key, fmt):
    """000, Theorem 1 for DeltaNet (one GH factor, beta in [0, 1], eigenvalues 1 - beta and 1): constant state on 1^k
    in the proof model, exactly."""
    if not any(key):
        key = [1] + key[1:]
    m = deltanet_model(str(beta), [str(k) for k in key])
    assert proof_constant_input(m.layers[0], fmt).period == 1


@settings(max_examples=25, deadline=None)
@given(a=st.lists(st.fractions(-1, 1, max_denominator=16), min_size=1, max_size=3),
       fmt=st.sampled_from(["fp8-e4m3-ieee", "e3m2", "bf16", "fp16"]))
def test_theorem2_real_spectrum_period_divides_two_in_proof_model(a, fmt):
    """000, Theorem 2 (one layer, proof B.2): real eigenvalues in [-1, 1] give an eventual period dividing 2 in the
    proof model, so counting mod 3 is impossible."""
    m = diagonal_layer_model([str(x) for x in a], ["1"] * len(a), h0=["1"] * len(a))
    assert proof_constant_input(m.layers[0], fmt).period in (1, 2)


def test_theorem2_two_layers_period_four_and_counting_mod_3_fails():
    """Two real layers reach period 4 = 2^L and count mod 4 for every length; one real layer fails mod 3."""
    for fmt in ("fp4-e2m1", "bf16"):
        c = collapse(two_layer_period4(), fmt, "op", cycle=["1"], prefix=[])
        assert c.first_wrong_step is None and c.period == 4 and c.exact_for_all_lengths
        c3 = collapse(counter_real(3), fmt, "op", cycle=["1"], prefix=[])
        assert c3.first_wrong_step is not None and c3.period in (1, 2)


def test_parity_with_eigenvalue_minus_one_solved_for_every_length():
    for fmt in ("fp4-e2m1", "fp8-e4m3fn", "bf16", "fp32"):
        c = collapse(parity_scalar("-1"), fmt, "op", word=None, cycle=["1"], prefix=["0", "1"])
        assert c.first_wrong_step is None and c.exact_for_all_lengths
    assert parity_fsa().output_trace([1, 1]) == ["1", "0"]
