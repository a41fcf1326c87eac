"""The image sets (lrnnkit.automata.holonomy.image_sets; paper 000, Theorem 5 via the holonomy decomposition, items
1-3): on random transformation semigroups of at most 5 points, the orbit is exactly {X.s : s in S^1} plus the
singletons (oracle: the closure enumerated by brute force), u_Q v_Q is the identity on the representative, and the
tiles of a representative are exactly its maximal proper subsets in the extended image set."""
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.automata.holonomy.image_sets import (image_orbit, mask_of, members, semigroup_closure,
                                                  subduction_classes, tiles_of)

gens_st = st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
                                                       min_size=1, max_size=3))


@settings(max_examples=40, deadline=None)
@given(gens_st)
def test_orbit_classes_and_tiles(gens):
    import numpy as np
    n = len(gens[0])
    g = [np.asarray(t, dtype=np.int64) for t in gens]
    sets, index, is_image, edges = image_orbit(g, n, 10_000)
    S1 = semigroup_closure(gens, n, monoid=True)
    images = {mask_of(s.tolist()) for s in S1}          # X.s, the set of s's images
    assert {m for m, im in zip(sets, is_image) if im} == images
    assert set(sets) == images | {1 << x for x in range(n)} and sets[0] == (1 << n) - 1
    assert all(index[m] == i for i, m in enumerate(sets))
    cls, comps, rep, out_edges, u, v = subduction_classes(g, n, sets, edges)
    for i, m in enumerate(sets):
        R = members(sets[rep[cls[i]]])
        assert mask_of(u[i][R].tolist()) == m                 # R.u_Q = Q
        assert v[i][u[i]][R].tolist() == R                    # u_Q v_Q = identity on R
    nonsingle, tiles, tile_index, child = tiles_of(n, sets, index, cls, comps, rep, u)
    for ci in nonsingle:
        R = sets[rep[ci]]
        proper = [m for m in sets if m != R and m & ~R == 0]
        maximal = {m for m in proper if not any(m != M and m & ~M == 0 for M in proper)}
        assert set(tiles[ci]) == maximal
