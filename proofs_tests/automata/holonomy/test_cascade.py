"""The holonomy cascade (lrnnkit.automata.holonomy.cascade; paper 000, Theorem 5, items 7-8 of the decomposition):
every code of a point decodes to it, and a lifted letter acts on codes as the letter acts on points (the
cascade emulates the automaton), on random transformation semigroups of at most 5 points."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.automata.holonomy.cascade import Holonomy
from lrnnkit.automata.holonomy.decomposition import holonomy_decomposition

gens_st = st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                                       min_size=1, max_size=3))


@settings(max_examples=30, deadline=None)
@given(gens_st)
def test_codes_decode_and_lifts_emulate(gens):
    hd = holonomy_decomposition(gens)
    assert isinstance(hd, Holonomy)
    n = len(gens[0])
    for x in range(n):
        assert hd.decode(hd.code_of(x)) == x
        for code in hd.codes_of(x):
            assert hd.decode(code) == x
    for g in gens:
        s = np.asarray(g, dtype=np.int64)
        for x in range(n):
            assert hd.decode(hd.lift_code(s, hd.code_of(x))) == g[x]
