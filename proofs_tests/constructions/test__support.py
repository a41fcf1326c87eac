"""The construction modules' shared machinery (lrnnkit.constructions._support): exact trigonometry in one
cyclotomic field, permutation groups by breadth-first closure, cycles, the transition group of an automaton, and
the homomorphism check. Oracles: float64 trigonometry, sympy's permutation groups, the automaton's own table."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from sympy.combinatorics import Permutation, PermutationGroup

from lrnnkit.automata.sources import load_source
from lrnnkit.constructions import _support as S
from lrnnkit.exact import to_float


@given(st.integers(-30, 30), st.integers(1, 24))
def test_exact_cos_and_sin(num, den):
    """Float64 values within 1e-12 of math.cos / math.sin (one rounding of an O(1) value), and cos^2 + sin^2 = 1
    exactly once both are lifted to one field Q(zeta_N)."""
    c, s = S.cos_frac(num, den), S.sin_frac(num, den)
    assert abs(to_float(c) - math.cos(2 * math.pi * num / den)) < 1e-12
    assert abs(to_float(s) - math.sin(2 * math.pi * num / den)) < 1e-12
    N = S.field_order([c, [s]])
    c2, s2 = S.lift([c, s], N)
    assert c2 * c2 + s2 * s2 == 1


@pytest.mark.parametrize("gens", [[[1, 0, 2], [1, 2, 0]], [[1, 2, 3, 0]], [[1, 0, 3, 2], [2, 3, 0, 1]],
                                  [[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]]])
def test_permutation_group_closure(gens):
    G = S.PermGroup(np.array(gens))
    ref = PermutationGroup([Permutation(g) for g in gens])
    assert G.order == ref.order() and G.is_abelian() == ref.is_abelian
    assert G.elements[0].tolist() == list(range(len(gens[0])))
    for i, e in enumerate(G.elements):
        p = np.arange(G.degree)
        for a in G.word[i]:                              # the word's product, first letter first
            p = G.gens[a][p]
        assert p.tolist() == e.tolist()
        assert G.element_order(i) == Permutation(e.tolist()).order()
        for a in range(len(gens)):
            assert G.mult_gen[i, a] == G.find(G.gens[a][e])


def test_cycles_and_moved_points():
    assert S.cycles([1, 2, 0, 4, 3, 5]) == [[0, 1, 2], [3, 4]]
    assert S.moved_points([1, 2, 0, 4, 3, 5]) == 5 and S.cycles([0, 1]) == []


def test_transition_group_of_an_automaton():
    fsa = load_source("group:S3")
    states, perms, G, _, letter_elem = S.group_of(fsa)
    assert G.order == 6 and S.not_group_reason(fsa) is None
    where = {q: i for i, q in enumerate(states)}
    for a in range(fsa.n_letters):
        assert G.elements[letter_elem[a]].tolist() == [where[int(fsa.delta[q, a])] for q in states]
    reason = S.not_group_reason(load_source("flipflop"))
    assert "not a permutation" in reason and S.letter_permutations(load_source("flipflop")) == reason


def test_homomorphism_check():
    """S3 onto itself (identity images) is an injective homomorphism; sending both generators of S3 to one
    transposition is not (the 3-cycle would go to an involution)."""
    G = S.PermGroup(np.array([[1, 0, 2], [1, 2, 0]]))
    assert S.check_homomorphism(G, G.gens) is None
    assert S.check_homomorphism(G, np.array([[1, 0, 2], [1, 0, 2]])) is not None
