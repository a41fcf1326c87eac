"""The certifier and the executors, on models built directly in the IR (independent of the constructions)."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lrnnkit.automata.fsa import FSA
from lrnnkit.certify import certify
from lrnnkit.exact import cos2pi, sin2pi
from lrnnkit.executor import run_exact
from lrnnkit.model import Decoder, GHFactor, Layer, Model, TableMap, Transition

from proofs_tests._models import one_hot_model
from proofs_tests.automata.test_fsa import fsas


def parity_fsa():
    return FSA(["0", "1"], [[0, 1], [1, 0]], name="parity")


def parity_model(beta):
    fsa = parity_fsa()
    t0 = Transition.from_factors([], 1)
    t1 = Transition.from_factors([GHFactor.exact(beta, [1])], 1)
    L = Layer("gh", 1, [t0, t1], np.array([1.0]), TableMap.identity("input", 2),
              Decoder.nearest([[1], [-1]], ["0", "1"]), H0_exact=[1])
    return Model(["0", "1"], [L], TableMap.identity(0, 2), ["0", "1"], provenance={"automaton": fsa.to_dict()})


def rotation_model(m):
    """Z_m counter: rotation by 2 pi/m written as two reflections (000, Section 4.2) - built here independently."""
    fsa = FSA(["0", "1"], [[q, (q + 1) % m] for q in range(m)], name=f"counter:{m}")
    f1 = GHFactor.exact(2, [1, 0])
    f2 = GHFactor.exact(2, [cos2pi(1, 2 * m), sin2pi(1, 2 * m)])
    refs = [[cos2pi(k, m), sin2pi(k, m)] for k in range(m)]
    L = Layer("gh", 2, [Transition.from_factors([], 2), Transition.from_factors([f1, f2], 2)], np.array([1.0, 0.0]),
              TableMap.identity("input", 2), Decoder.nearest(refs, [str(k) for k in range(m)]), H0_exact=[1, 0])
    return fsa, Model(["0", "1"], [L], TableMap.identity(0, m), [str(k) for k in range(m)],
                      provenance={"automaton": fsa.to_dict()})


def test_parity_reflection_certifies():
    c = certify(parity_model(2))
    assert c.certified and c.method == "exact-bfs" and c.reachable_states == 2
    assert c.eigenvalues_in_unit_interval and c.max_factors_per_token == 1
    assert c.float_check["mismatches"] == 0


@pytest.mark.parametrize("beta", [0, 1, "1/2"])
def test_parity_fails_without_a_negative_eigenvalue(beta):
    c = certify(parity_model(beta))
    assert not c.certified
    # the shortest failing word is a single "1": after it the state is 1 - beta >= 0, nearer to +1 than to -1
    # (beta = 1: exactly between, a decoder tie)
    assert c.counterexample == ["1"]


def test_contracting_negative_eigenvalue_does_not_close():
    """beta = 3/2 gives the eigenvalue -1/2: in EXACT arithmetic the sign still alternates, so no word fails, but
    the states (-1/2)^k are infinitely many: the search cannot close, and the certifier must say so (not certify,
    no counterexample). In finite precision the state underflows to 0 (000, Theorem 1)."""
    c = certify(parity_model("3/2"), float_steps=0)
    assert not c.certified and c.counterexample is None and "did not close" in c.reason


@pytest.mark.parametrize("m", [2, 3, 5, 7, 12])
def test_rotation_counter_certifies_exactly(m):
    fsa, M = rotation_model(m)
    c = certify(M, fsa)
    assert c.certified and c.reachable_states == m


def _brute_force_shortest_failure(model, fsa, max_len):
    for n in range(1, max_len + 1):
        for w in itertools.product(range(fsa.n_letters), repeat=n):
            got = run_exact(model, list(w))
            want = fsa.output_trace(list(w))
            labels = [model.output_labels[g] if g >= 0 else None for g in got]
            if labels != want[: len(labels)] or len(labels) < n:
                return n
    return None


@given(fsas(max_states=5, max_letters=2))
def test_one_hot_models_certify(f):
    c = certify(one_hot_model(f), f, float_steps=200)
    assert c.certified and c.float_check["mismatches"] == 0
    # exactly the reachable automaton states are reached (one-hot state <-> automaton state)
    reach = {f.start}
    frontier = [f.start]
    while frontier:
        q = frontier.pop()
        for a in range(f.n_letters):
            p = int(f.delta[q, a])
            if p not in reach:
                reach.add(p)
                frontier.append(p)
    assert c.reachable_states == len(reach)


@settings(max_examples=15)
@given(fsas(max_states=4, max_letters=2), st.integers(0, 10 ** 6))
def test_counterexamples_are_real_and_shortest(f, seed):
    """Corrupt one letter matrix of a correct model; the certifier must fail exactly when some word fails, and its
    counterexample must fail and be as short as the shortest failing word found by brute force."""
    rng = np.random.default_rng(seed)
    M = one_hot_model(f)
    L = M.layers[0]
    a = int(rng.integers(f.n_letters))
    q = int(rng.integers(f.n_states))
    n = f.n_states
    A = [row[:] for row in L.transitions[a].A_exact]
    old = int(f.delta[q, a])
    new = int(rng.integers(n))
    for p in range(n):
        A[p][q] = 1 if p == new else 0
    t = Transition.from_exact(A)
    L.transitions[a] = Transition(t.A, t.B, None, t.A_exact, t.B_exact)
    c = certify(M, f, float_steps=0)
    shortest = _brute_force_shortest_failure(M, f, max_len=2 * n + 1)
    if shortest is None:
        assert c.certified or new == old
    else:
        assert not c.certified
        assert len(c.counterexample) == shortest
        w = f.encode(c.counterexample)
        got = run_exact(M, w)
        assert got[-1] < 0 or M.output_labels[got[-1]] != f.output_trace(w)[-1]


@settings(max_examples=20)
@given(fsas(max_states=5, max_letters=3), st.integers(0, 10 ** 6), st.booleans())
def test_vectorized_and_generic_searches_agree(f, seed, corrupt):
    """The numpy search (one integer layer) and the generic search must give identical certificates: verdict,
    reachable pairs, explored transitions and the same shortest counterexample."""
    M = one_hot_model(f)
    if corrupt:
        rng = np.random.default_rng(seed)
        L = M.layers[0]
        a, q, new = int(rng.integers(f.n_letters)), int(rng.integers(f.n_states)), int(rng.integers(f.n_states))
        A = [row[:] for row in L.transitions[a].A_exact]
        for p in range(f.n_states):
            A[p][q] = 1 if p == new else 0
        t = Transition.from_exact(A)
        L.transitions[a] = Transition(t.A, t.B, None, t.A_exact, t.B_exact)
    c1 = certify(M, f, float_steps=0, vectorized=True)
    c2 = certify(M, f, float_steps=0, vectorized=False)
    assert c1.to_json() == c2.to_json()


@pytest.mark.parametrize("broken, needle", [({"alphabet": None}, "alphabet must be a list"),
                                            ({"delta": "x"}, "delta"), ({"bogus": 1}, "unknown keys")])
def test_a_broken_recorded_automaton_is_refused_with_one_line(broken, needle, tmp_path, capsys):
    """``lrnnkit verify`` on a model whose provenance.automaton is not an automaton (found by the CLI fuzz test: a
    null alphabet was an internal error): the automaton file's own checks, exit 2, one line naming the field."""
    from lrnnkit.cli import main
    m = parity_model(2)
    m.provenance["automaton"] = {**m.provenance["automaton"], **broken}
    path = tmp_path / "m.json"
    m.save(str(path))
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "provenance.automaton" in err[0] and needle in err[0], err
