"""The pieces of a layer (lrnnkit.model.layer; paper 000, eq. 1 and Proposition 1): a GH factor
``G = I - beta u u^T / (u^T u)`` exactly and in float64, the letter matrix of a factor list with the later factor
on the left (DeltaProduct's order), and the row-major table of an input map. Oracles: hand-computed matrices."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.errors import InputError
from lrnnkit.model.layer import GHFactor, Read, TableMap, Transition


def test_gh_factor_exact_and_float_match_a_hand_computation():
    """u = (3, 4), beta = 2: G = I - 2 u u^T / 25 = [[7, -24], [-24, -7]] / 25 (a reflection, det -1)."""
    f = GHFactor.exact(2, [3, 4])
    want = [[Fraction(7, 25), Fraction(-24, 25)], [Fraction(-24, 25), Fraction(-7, 25)]]
    assert f.matrix_exact() == want
    # float64 of entries computed from the unit vector (0.6, 0.8): a few ulps at most
    assert np.allclose(f.matrix(), np.array(want, dtype=float), rtol=0, atol=4e-16)
    assert np.allclose(f.v, [0.6, 0.8], rtol=0, atol=1e-16)


def test_zero_direction_is_refused():
    with pytest.raises(InputError, match="zero direction"):
        GHFactor.exact(1, [0, 0])


def test_later_factor_acts_on_the_left():
    """Two reflections that do not commute: A = G_2 G_1, not G_1 G_2."""
    g1, g2 = GHFactor.exact(2, [1, 0]), GHFactor.exact(2, [1, 1])
    t = Transition.from_factors([g1, g2], 2)
    G1 = [[-1, 0], [0, 1]]
    G2 = [[0, -1], [-1, 0]]
    want = [[sum(Fraction(G2[i][k]) * G1[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    assert want == [[0, -1], [1, 0]]                      # G_1 G_2 would be [[0, 1], [-1, 0]]
    assert t.A_exact == want
    assert np.allclose(t.A, np.array(want, dtype=float), rtol=0, atol=1e-15)
    assert t.B_exact == [0, 0] and t.is_exact


def test_table_map_is_row_major_and_checks_its_table():
    """Two reads of sizes (2, 3): the pair (a, b) is entry 3 a + b."""
    tm = TableMap([Read("input", 0), Read(0, 1)], [2, 3], [0, 1, 2, 3, 4, 5], 6)
    assert [tm.lookup([a, b]) for a in range(2) for b in range(3)] == list(range(6))
    assert tm.lookup_batch([np.array([1, 0]), np.array([2, 1])]).tolist() == [5, 1]
    with pytest.raises(InputError, match="table has 5 entries"):
        TableMap([Read("input", 0), Read(0, 1)], [2, 3], [0] * 5, 6)
    with pytest.raises(InputError, match="entries must lie in 0..5"):
        TableMap([Read("input", 0)], [2], [0, 6], 6)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(0, 6), st.integers(0, 7), st.integers(2, 5), st.randoms(use_true_random=False))
def test_the_lag_rule(B, T, lag, size, rnd):
    """``Read.at_lag``: step t reads step t - lag, the pad ``size - 1`` before the start, exactly as the definition
    says element by element; numpy and torch give the same integers."""
    import torch
    v = np.array([[rnd.randrange(size - 1) for _ in range(T)] for _ in range(B)], dtype=np.int64).reshape(B, T)
    got = Read(0, lag).at_lag(v, size)
    want = [[v[b, t - lag] if t >= lag else size - 1 for t in range(T)] for b in range(B)]
    assert got.shape == (B, T) and got.tolist() == want
    assert Read(0, lag).at_lag(torch.as_tensor(v), size, xp=torch).tolist() == want
