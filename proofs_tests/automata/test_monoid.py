"""Transition monoids: conventions (right action, product order), sizes against known values and brute force,
shortest witness words, the right Cayley graph, aperiodicity, the size cap."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.monoid import closure, compose, transition_monoid
from lrnnkit.automata.sources import load_source
from lrnnkit.errors import SizeLimitError
from lrnnkit.testing.strategies import fsas, transformation_generators


def brute_force(gens, n, max_len=None):
    """All transformations realised by words, by increasing word length: {element: shortest length}."""
    ident = tuple(range(n))
    found = {ident: 0}
    frontier = [ident]
    L = 0
    while frontier:
        L += 1
        nxt = []
        for x in frontier:
            for g in gens:
                y = tuple(g[q] for q in x)    # first x, then g
                if y not in found:
                    found[y] = L
                    nxt.append(y)
        frontier = nxt
    return found


def test_product_is_first_left_then_right():
    x, y = (1, 2, 0), (0, 0, 2)
    assert compose(x, y) == (0, 2, 0)                 # q.(xy) = (q.x).y
    f = FSA(("x", "y"), np.array([x, y]).T)
    M = transition_monoid(f)
    i = M.index(compose(x, y))
    assert M.act(0, [0, 1]) == i                      # the word "x y" realises xy
    assert [f.run([0, 1], q) for q in range(3)] == list(compose(x, y))


@given(fsas(max_states=5, max_letters=3), st.data())
def test_word_action_matches_automaton(f, data):
    M = transition_monoid(f)
    u = data.draw(st.lists(st.integers(0, f.n_letters - 1), max_size=8))
    v = data.draw(st.lists(st.integers(0, f.n_letters - 1), max_size=8))
    iu, iv, iuv = M.act(0, u), M.act(0, v), M.act(0, u + v)
    assert M.element(iuv) == tuple(f.run(u + v, q) for q in range(f.n_states))
    assert M.multiply(iu, iv) == iuv                   # delta_{uv} = delta_u delta_v


@given(transformation_generators(max_points=5, max_gens=3))
def test_closure_equals_brute_force_with_shortest_words(gens):
    n = len(gens[0])
    M = closure(gens, n)
    bf = brute_force(gens, n)
    assert {M.element(i) for i in range(M.size)} == set(bf)
    assert M.size == len(bf)
    for i in range(M.size):
        w = M.word(i)
        assert len(w) == bf[M.element(i)]              # shortest
        x = tuple(range(n))
        for a in w:
            x = tuple(gens[a][q] for q in x)
        assert x == M.element(i)                       # witness realises the element
    # right Cayley graph
    for i in range(M.size):
        for a in range(len(gens)):
            assert M.element(M.cayley[i, a]) == compose(M.element(i), gens[a])


def test_witness_words_are_shortlex_least():
    gens = [(1, 2, 0), (1, 0, 2), (0, 0, 2)]
    M = closure(gens, 3)
    first = {}
    for L in range(0, 8):                      # words in shortlex order: by length, then lexicographically
        for cand in itertools.product(range(len(gens)), repeat=L):
            first.setdefault(M.act(0, list(cand)), list(cand))
    assert len(first) == M.size
    for i in range(M.size):
        assert M.word(i) == first[i]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_full_transformation_monoid_has_n_to_the_n(n):
    cyc = [(q + 1) % n for q in range(n)]
    swap = [1, 0] + list(range(2, n)) if n > 1 else [0]
    merge = [0, 0] + list(range(2, n)) if n > 1 else [0]
    M = closure([cyc, swap, merge], n)
    assert M.size == n ** n
    assert M.is_aperiodic == (n == 1)
    assert M.is_group == (n == 1)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_symmetric_group_has_n_factorial(n):
    cyc = [(q + 1) % n for q in range(n)]
    swap = [1, 0] + list(range(2, n)) if n > 1 else [0]
    M = closure([cyc, swap], n)
    assert M.size == math.factorial(n) and M.is_group


def test_known_monoids_of_presets():
    P = transition_monoid(load_source("parity"))
    assert P.size == 2 and P.is_group and not P.is_aperiodic
    F = transition_monoid(load_source("flipflop"))
    assert F.size == 3 and not F.is_group and F.is_aperiodic
    assert sorted(F.element(i) for i in range(3)) == [(0, 0), (0, 1), (1, 1)]
    C = transition_monoid(load_source("counter:6"))
    assert C.size == 6 and C.is_group
    E = transition_monoid(load_source("even-pairs"))
    assert E.is_aperiodic and not E.is_group
    assert transition_monoid(load_source("group:S4")).size == 24
    assert transition_monoid(load_source("cycle-nav:7")).size == 7


@given(transformation_generators(max_points=5, max_gens=3))
def test_aperiodic_matches_power_sequences(gens):
    n = len(gens[0])
    M = closure(gens, n)
    expect = True
    for i in range(M.size):
        x = M.element(i)
        powers = [x]
        while True:           # find the first repeat in x, x^2, x^3, ...
            nxt = compose(powers[-1], x)
            if nxt in powers:
                period = len(powers) - powers.index(nxt)
                break
            powers.append(nxt)
        if period != 1:
            expect = False
    assert M.is_aperiodic == expect


def test_idempotents():
    M = transition_monoid(load_source("flipflop"))
    assert sorted(M.element(i) for i in M.idempotents()) == [(0, 0), (0, 1), (1, 1)]


def test_cap_raises_with_numbers():
    cyc, swap, merge = [1, 2, 3, 4, 5, 0], [1, 0, 2, 3, 4, 5], [0, 0, 2, 3, 4, 5]
    with pytest.raises(SizeLimitError) as info:
        closure([cyc, swap, merge], 6, cap=1000)
    msg = str(info.value)
    assert "cap 1000" in msg and "6 points" in msg and "3 generators" in msg


def test_multiplication_table_is_associative_and_matches_compose():
    M = closure([(1, 2, 0, 3), (0, 0, 2, 1)], 4)
    T = M.multiplication_table()
    for i in range(M.size):
        for j in range(M.size):
            assert M.element(T[i, j]) == compose(M.element(i), M.element(j))
    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b, c = rng.integers(0, M.size, 3)
        assert T[T[a, b], c] == T[a, T[b, c]]


def test_large_degree_uses_byte_keys():
    n = 20                         # n^n > 2^63: rows hashed as bytes
    cyc = [(q + 1) % n for q in range(n)]
    M = closure([cyc], n)
    assert M.size == n and M.is_group
    assert M.index(tuple(cyc)) == 1
