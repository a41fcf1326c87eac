"""``describe`` (the data behind ``lrnnkit info --json``): exact keys, known values for presets, text rendering."""
import json

import pytest
from hypothesis import given

from lrnnkit.automata.info import INFO_KEYS, describe, render
from lrnnkit.automata.minimize import minimize
from lrnnkit.automata.monoid import closure
from lrnnkit.automata.sources import load_source
from lrnnkit.testing.strategies import fsas

# (source, states, minimal_states, monoid_size, is_group, aperiodic, group order / name / min degree)
KNOWN = [
    ("parity", 2, 2, 2, True, False, (2, "Z2", 2)),
    ("counter:6", 6, 6, 6, True, False, (6, "Z6", 5)),
    ("flipflop", 2, 2, 3, False, True, None),
    ("even-pairs", 5, 5, 5, False, True, None),
    ("cycle-nav:4", 4, 4, 4, True, False, (4, "Z4", 4)),
    ("group:S5", 120, 120, 120, True, False, (120, "S5", 5)),
    ("group:A4xZ5", 60, 60, 60, True, False, (60, "A4xZ5", 9)),
    ("group:S3xZ2", 12, 12, 12, True, False, (12, "D6", 5)),
    ("regex:(ab)*", 3, 3, 6, False, True, None),
]


@pytest.mark.parametrize("source,states,minimal,size,is_group,aperiodic,group", KNOWN)
def test_known_values(source, states, minimal, size, is_group, aperiodic, group):
    d = describe(load_source(source))
    assert tuple(d) == INFO_KEYS
    assert d["states"] == states and d["minimal_states"] == minimal
    assert d["monoid_size"] == size and d["is_group"] is is_group and d["aperiodic"] is aperiodic
    if group is None:
        assert d["group"] is None
    else:
        g = d["group"]
        assert set(g) == {"order", "abelian", "solvable", "min_perm_degree", "name"}
        assert (g["order"], g["name"], g["min_perm_degree"]) == group
    json.dumps(d)                                     # JSON-serialisable as is
    text = render(d, source)
    assert f"{states}" in text and ("yes" if is_group else "no") in text


def test_regex_ab_star_monoid_by_hand():
    # (ab)*: minimal DFA {start(acc), after a, sink}; letters a = (1, 2, 2), b = (2, 0, 2)
    f = load_source("regex:(ab)*")
    assert [tuple(t) for t in f.transformations()] == [(1, 2, 2), (2, 0, 2)]
    M = closure(f.transformations(), 3)
    assert {M.element(i) for i in range(M.size)} == {(0, 1, 2), (1, 2, 2), (2, 0, 2), (0, 2, 2), (2, 1, 2),
                                                     (2, 2, 2)}


@given(fsas(max_states=5, max_letters=3))
def test_describe_random_consistency(f):
    d = describe(f)
    assert d["states"] == f.n_states
    assert d["alphabet"] == list(f.alphabet)
    assert d["minimal_states"] == minimize(f).n_states <= f.n_states
    assert d["is_group"] == all(sorted(t) == list(range(f.n_states)) for t in f.transformations())
    if d["is_group"]:
        assert d["group"]["order"] == d["monoid_size"]
        assert d["aperiodic"] == (d["monoid_size"] == 1)
    else:
        assert d["group"] is None


def test_monoid_past_cap_is_null():
    f = load_source("transformations:[[1,2,3,4,0],[1,0,2,3,4],[0,0,2,3,4]]")
    d = describe(f, monoid_cap=100)
    assert d["monoid_size"] is None and d["aperiodic"] is None and d["group"] is None
    assert describe(f)["monoid_size"] == 3125
