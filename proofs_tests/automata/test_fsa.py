"""The FSA type: validation, conventions (left-to-right words, right action), outputs, hashing."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from lrnnkit.automata.fsa import FSA
from lrnnkit.errors import InputError


@st.composite
def fsas(draw, max_states=6, max_letters=3):
    n = draw(st.integers(1, max_states))
    k = draw(st.integers(1, max_letters))
    delta = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=k, max_size=k), min_size=n, max_size=n))
    acc = draw(st.sets(st.integers(0, n - 1)))
    return FSA([f"a{i}" for i in range(k)], delta, 0, acc)


def test_word_is_read_left_to_right():
    # two letters on 3 states: a = (0 1) swap, b = reset to 2. delta(q, ab) = delta(delta(q,a), b)
    f = FSA(["a", "b"], [[1, 2], [0, 2], [2, 2]])
    assert f.run([0, 1]) == 2 and f.run([1, 0]) == 2
    g = FSA(["a", "b"], [[1, 0], [0, 0], [2, 2]])  # a swaps 0,1 ; b sends 0,1 -> 0
    assert g.run(g.encode("b a")) == 1       # first b (0 -> 0), then a (0 -> 1)
    assert g.run(g.encode("a b")) == 0       # first a (0 -> 1), then b (1 -> 0)


@given(fsas(), st.lists(st.integers(0, 2), max_size=12), st.lists(st.integers(0, 2), max_size=12))
def test_run_is_a_right_action(f, u, v):
    u = [x % f.n_letters for x in u]
    v = [x % f.n_letters for x in v]
    assert f.run(u + v) == f.run(v, state=f.run(u))
    assert f.trace(u + v)[len(u):] == f.trace(v, state=f.run(u))


@given(fsas())
def test_trace_batch_matches_trace(f):
    rng = np.random.default_rng(1)
    W = rng.integers(0, f.n_letters, size=(3, 9))
    tb = f.trace_batch(W)
    for b in range(3):
        assert tb[b].tolist() == f.trace(W[b].tolist())


def test_outputs_precedence():
    d = [[1], [0]]
    assert FSA(["x"], d).outputs == ("0", "1")                       # state index
    assert FSA(["x"], d, accepting={1}).outputs == ("0", "1")
    assert FSA(["x"], d, accepting={0}).outputs == ("1", "0")         # accept flag
    assert FSA(["x"], d, accepting={0}, labels=["e", "g"]).outputs == ("e", "g")  # labels win


@pytest.mark.parametrize("kwargs, msg", [
    (dict(alphabet=[], delta=[[]]), "empty alphabet"),
    (dict(alphabet=["a", "a"], delta=[[0, 0]]), "duplicate"),
    (dict(alphabet=["a"], delta=[[1]]), "out of range"),
    (dict(alphabet=["a"], delta=[[None]]), "missing transition"),
    (dict(alphabet=["a", "b"], delta=[[0]]), "shape"),
    (dict(alphabet=["a"], delta=[[0]], start=3), "start state"),
    (dict(alphabet=["a b"], delta=[[0]]), "white space"),
    (dict(alphabet=["a"], delta=[[0.5]]), "not a state index"),
    (dict(alphabet=["a"], delta=[[0]], labels=["x", "y"]), "labels"),
    (dict(alphabet=["a"], delta=[[0]], accepting=[4]), "accepting"),
])
def test_bad_automata_are_input_errors(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        FSA(**kwargs)


def test_unknown_symbol():
    f = FSA(["a"], [[0]])
    with pytest.raises(InputError, match="unknown symbol 'b'"):
        f.encode("a b")


@given(fsas())
def test_hash_depends_on_behaviour_not_name(f):
    g = FSA(f.alphabet, f.delta, f.start, f.accepting, name="other")
    assert f.content_hash() == g.content_hash() and f == g
    h = FSA(f.alphabet, f.delta, f.start, set(range(f.n_states)) - set(f.accepting))
    assert (h.content_hash() == f.content_hash()) == (h.outputs == f.outputs)
