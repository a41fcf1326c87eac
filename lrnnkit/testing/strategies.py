"""Public hypothesis strategies for lrnnkit's test suite (and for users' own property tests).

* :func:`transformations` — one transformation of ``0..n-1`` as an image list;
* :func:`permutations` — one permutation of ``0..n-1`` as an image list;
* :func:`transformation_generators` — a list of transformations of a common ``n`` (a transformation semigroup
  given by generators, as in ``transformations:[[...],...]``);
* :func:`permutation_generators` — a list of permutations of a common degree (a permutation group by generators);
* :func:`fsas` — complete deterministic automata with bounded states and letters, with output labels drawn
  from a small set (or the state indices), alphabet ``a0, a1, ...``;
* :func:`group_automata` — automata whose letters permute the states (transition monoid a group);
* :func:`words` — words (lists of letter indices) over an automaton's alphabet.

The bounds are keyword arguments so that the default test profile can keep examples small.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ..automata.fsa import FSA

__all__ = ["transformations", "permutations", "transformation_generators", "permutation_generators", "fsas",
           "group_automata", "words"]


def transformations(n: int) -> st.SearchStrategy:
    return st.lists(st.integers(0, n - 1), min_size=n, max_size=n)


def permutations(n: int) -> st.SearchStrategy:
    return st.permutations(list(range(n)))


@st.composite
def transformation_generators(draw, min_points: int = 1, max_points: int = 5, min_gens: int = 1,
                              max_gens: int = 3):
    n = draw(st.integers(min_points, max_points))
    return draw(st.lists(transformations(n), min_size=min_gens, max_size=max_gens))


@st.composite
def permutation_generators(draw, min_degree: int = 1, max_degree: int = 6, min_gens: int = 1, max_gens: int = 3):
    n = draw(st.integers(min_degree, max_degree))
    return draw(st.lists(permutations(n), min_size=min_gens, max_size=max_gens))


@st.composite
def fsas(draw, min_states: int = 1, max_states: int = 6, min_letters: int = 1, max_letters: int = 3,
         n_labels: int | None = 2, start_zero: bool = False):
    """A random complete DFA; ``n_labels=None`` keeps the state indices as outputs."""
    n = draw(st.integers(min_states, max_states))
    k = draw(st.integers(min_letters, max_letters))
    delta = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=k, max_size=k), min_size=n, max_size=n))
    start = 0 if start_zero else draw(st.integers(0, n - 1))
    labels = None
    if n_labels is not None:
        labels = tuple(str(x) for x in draw(st.lists(st.integers(0, n_labels - 1), min_size=n, max_size=n)))
    return FSA(tuple(f"a{i}" for i in range(k)), delta, start, None, labels, None, "random")


@st.composite
def group_automata(draw, min_states: int = 1, max_states: int = 6, min_letters: int = 1, max_letters: int = 3):
    gens = draw(permutation_generators(min_states, max_states, min_letters, max_letters))
    n = len(gens[0])
    delta = [[g[q] for g in gens] for q in range(n)]
    return FSA(tuple(f"a{i}" for i in range(len(gens))), delta, 0, None, None, None, "random-group")


def words(fsa: FSA, min_size: int = 0, max_size: int = 20) -> st.SearchStrategy:
    return st.lists(st.integers(0, fsa.n_letters - 1), min_size=min_size, max_size=max_size)
