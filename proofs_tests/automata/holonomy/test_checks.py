"""lrnnkit.automata.holonomy.checks: the checks share one lift matrix per S (Holonomy.lift_matrix_cached), and a
wrong claim about S fails them. The checks themselves run on every decomposition in test_decomposition.py."""
import numpy as np

from lrnnkit.automata.holonomy import CheckResult, check_emulation, holonomy_decomposition, semigroup_closure
from lrnnkit.automata.holonomy.checks import check_all

RESET_FOLD = [[1, 2, 0], [0, 0, 0], [0, 0, 1]]      # Z_3, a reset and a fold on 3 points


def test_the_cached_lift_matrix_is_the_lift_matrix_of_that_s():
    hd = holonomy_decomposition(RESET_FOLD)
    S = semigroup_closure(hd.generators, hd.n)
    first = hd.lift_matrix_cached(S)
    assert np.array_equal(first, hd.lift_matrix(S))
    assert hd.lift_matrix_cached(S.copy()) is first            # same S: computed once
    T = S[::-1].copy()
    other = hd.lift_matrix_cached(T)                          # another S: recomputed, not the stale rows
    assert np.array_equal(other, hd.lift_matrix(T)) and not np.array_equal(other, first)


def test_check_all_passes_and_a_wrong_s_fails():
    hd = holonomy_decomposition(RESET_FOLD)
    res = check_all(hd)
    assert set(res) == {"action", "emulation", "relational_morphism", "cascade"}
    assert all(isinstance(r, CheckResult) and r.ok and bool(r) and r.checked > 0 for r in res.values())
    S = semigroup_closure(hd.generators, hd.n)
    bad = check_emulation(hd, S[1:])                            # S less one element: the cascade generates more
    assert not bad and bad.name == "emulation" and bad.counterexample is not None
