"""Minimisation w.r.t. output labels: behaviour preserved, result minimal (checked against brute-force
Myhill-Nerode classes), canonical numbering; the pinned conventions (word order, matrix of a word)."""
import itertools

import numpy as np
from hypothesis import given, strategies as st

from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.minimize import (distinguishing_word, equivalent, minimal_states, minimize, reachable,
                                       reachable_states)
from lrnnkit.automata.sources import load_source
from lrnnkit.testing.strategies import fsas


def brute_force_classes(f: FSA) -> int:
    """Number of reachable states up to equivalence, by output signatures on all words of length < n
    (two states of an n-state Moore machine that agree on all words of length <= n - 1 are equivalent)."""
    n, k = f.n_states, f.n_letters
    reach = set(reachable_states(f))
    words = [w for L in range(n) for w in itertools.product(range(k), repeat=L)]
    sigs = {tuple(f.outputs[f.run(list(w), q)] for w in words) for q in reach}
    return len(sigs)


@given(fsas(max_states=6, max_letters=2, n_labels=3))
def test_minimize_preserves_outputs_and_is_minimal(f):
    m = minimize(f)
    assert distinguishing_word(f, m) is None
    assert m.n_states == brute_force_classes(f)
    assert minimal_states(f) == m.n_states
    # every state of m is reachable and pairwise distinguishable
    assert sorted(reachable_states(m)) == list(range(m.n_states))
    for p, q in itertools.combinations(range(m.n_states), 2):
        a = FSA(m.alphabet, m.delta, p, None, m.outputs)
        b = FSA(m.alphabet, m.delta, q, None, m.outputs)
        assert distinguishing_word(a, b) is not None


@given(fsas(max_states=6, max_letters=3), st.permutations(list(range(6))))
def test_minimal_form_is_canonical(f, perm):
    n = f.n_states
    p = [x for x in perm if x < n]                      # relabel states by a permutation
    inv = {p[q]: q for q in range(n)}
    delta = [[p[int(f.delta[inv[r], a])] for a in range(f.n_letters)] for r in range(n)]
    labels = [f.outputs[inv[r]] for r in range(n)]
    g = FSA(f.alphabet, delta, p[f.start], None, labels)
    assert equivalent(f, g)
    mf, mg = minimize(f), minimize(g)
    assert mf == mg and mf.delta.tolist() == mg.delta.tolist()
    assert minimize(mf) == mf                           # idempotent


@given(fsas(max_states=6, max_letters=2, n_labels=2), fsas(max_states=6, max_letters=2, n_labels=2))
def test_distinguishing_word_is_shortest(a, b):
    if a.n_letters != b.n_letters:
        return
    w = distinguishing_word(a, b)
    if w is None:
        for L in range(a.n_states * b.n_states + 1):
            for u in itertools.product(range(a.n_letters), repeat=min(L, 6)):
                assert a.outputs[a.run(list(u))] == b.outputs[b.run(list(u))]
        return
    assert a.outputs[a.run(w)] != b.outputs[b.run(w)]
    for L in range(len(w)):
        for u in itertools.product(range(a.n_letters), repeat=L):
            assert a.outputs[a.run(list(u))] == b.outputs[b.run(list(u))]


def test_reachable_part_and_known_minimal_sizes():
    f = FSA(("a",), [[1], [0], [2]], 0, None, ("x", "y", "z"))
    r = reachable(f)
    assert r.n_states == 2 and r.outputs == ("x", "y")
    # two copies of parity with equal outputs collapse
    g = FSA(("0", "1"), [[0, 1], [1, 2], [2, 3], [3, 0]], 0, None, ("0", "1", "0", "1"))
    assert minimal_states(g) == 2 and minimize(g) == load_source("parity")
    assert minimal_states(load_source("even-pairs")) == 5
    assert minimal_states(load_source("mod-arith:3")) == 2 * 9 + 2 * 3 + 1
    assert minimal_states(load_source("counter:12")) == 12


def test_accepting_form_is_kept():
    f = FSA(("a",), [[1], [2], [0], [0]], 0, frozenset({0}))
    m = minimize(f)
    assert m.accepting == frozenset({0}) and m.n_states == 3


# ---------------------------------------------------------------------------------------------- conventions
@given(fsas(max_states=5, max_letters=3), st.data())
def test_word_matrix_is_reverse_product_of_letter_matrices(f, data):
    """docs/conventions.rst: M(a)[q', q] = 1 iff delta(q, a) = q'; the word a_1..a_t has matrix M(a_t)...M(a_1)."""
    n = f.n_states

    def M(a):
        m = np.zeros((n, n), dtype=np.int64)
        for q in range(n):
            m[f.delta[q, a], q] = 1
        return m

    w = data.draw(st.lists(st.integers(0, f.n_letters - 1), max_size=7))
    W = np.eye(n, dtype=np.int64)
    for a in w:
        W = M(a) @ W
    for q in range(n):
        e = np.zeros(n, dtype=np.int64)
        e[q] = 1
        out = W @ e
        assert out.tolist() == [int(p == f.run(w, q)) for p in range(n)]
