"""Datasets of lrnnkit.learn.tasks against the automaton and independent oracles."""
import ast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit import load_source
from lrnnkit.automata.groups import named_group
from lrnnkit.errors import InputError
from lrnnkit.learn.tasks import BLANK, IGNORE, PAD, batch_rng, make_task

SOURCES = ["parity", "group:S3", "group:A4", "flipflop", "cycle-nav:4", "even-pairs", "counter:3"]


def _words(task, x):
    """Token ids -> lists of symbol names without padding."""
    return [[task.vocab[i] for i in row if task.vocab[i] != PAD] for row in x]


@settings(max_examples=25, deadline=None)
@given(src=st.sampled_from(SOURCES), seed=st.integers(0, 10**6), step=st.integers(0, 10**6),
       lo=st.integers(1, 12), extra=st.integers(0, 12))
def test_automaton_targets_are_the_output_trace(src, seed, step, lo, extra):
    fsa = load_source(src)
    task = make_task(src)
    x, y = task.sample(6, (lo, lo + extra), batch_rng(seed, step))
    assert x.shape == y.shape
    for row, w in enumerate(_words(task, x)):
        assert lo <= len(w) <= lo + extra
        outs = fsa.output_trace(fsa.encode(w))            # the FSA's own outputs, label by label
        got = [task.labels[c] for c in y[row, :len(w)]]
        assert got == outs
        assert (y[row, len(w):] == IGNORE).all() and all(task.vocab[i] == PAD for i in x[row, len(w):])


def test_batches_are_a_function_of_seed_and_step():
    task = make_task("group:S5")
    a = task.sample(8, (3, 20), batch_rng(1, 7))
    b = task.sample(8, (3, 20), batch_rng(1, 7))
    c = task.sample(8, (3, 20), batch_rng(1, 8))
    d = task.sample(8, (3, 20), batch_rng(1, 7, stream=1))
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[0], d[0])


def test_sum_and_even_pair_against_arithmetic():
    rng = batch_rng(0, 0)
    s = make_task("sum:5")
    x, y = s.sample(16, 30, rng)
    digits = np.array([[int(s.vocab[i]) for i in row] for row in x])
    assert np.array_equal(np.array([[int(s.labels[c]) for c in row] for row in y]), np.cumsum(digits, 1) % 5)
    e = make_task("even-pair:5")
    x, y = e.sample(16, 30, rng)
    want = (x == x[:, :1])
    assert np.array_equal(np.array([[e.labels[c] == "1" for c in row] for row in y]), want)


def test_swaps_only_and_three_point_letters():
    G = named_group("S5")
    P = np.array(G.perms)
    for name, k, count in (("S5-swaps", 2, 1 + 10), ("S5-3perm", 3, 1 + 10 + 20)):
        task = make_task(name)
        letters = task.meta["letters"]
        assert len(letters) == count
        idx = [G.element_names.index(s) for s in letters]
        assert ((P[idx] != np.arange(5)).sum(1) <= k).all()
        x, _ = task.sample(32, 20, batch_rng(0, 3))
        assert set(task.vocab[i] for i in x.reshape(-1)) <= set(letters)
        assert task.n_out == 120   # the outputs still range over the whole group (000, Section 5.2)


@pytest.mark.parametrize("k", [2, 4])
def test_k_tokens_per_transition(k):
    fsa = load_source("group:S4")
    task = make_task(f"S4-{k}tok")
    x, y = task.sample(8, 4 * k + 1, batch_rng(0, 1))
    for row in range(8):
        toks = [task.vocab[i] for i in x[row]]
        assert all((t == BLANK) == (j % k != 0) for j, t in enumerate(toks))
        letters = [t for t in toks if t != BLANK]
        trace = fsa.output_trace(fsa.encode(letters))
        for j in range(len(toks)):      # position j answers the letters up to position j - k + 1
            n = (j - (k - 1)) // k + 1 if j >= k - 1 else 0
            want = trace[n - 1] if n else fsa.outputs[fsa.start]
            assert task.labels[y[row, j]] == want


def _ast_value(tokens, M):
    """Independent oracle: Python's own parser (precedence, unary minus), exact integers, then mod M."""
    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}[type(n.op)]
        raise AssertionError(ast.dump(n))
    return ev(ast.parse(" ".join(tokens), mode="eval")) % M


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), L=st.integers(2, 30))
def test_bracket_arithmetic_against_python_parser(seed, L):
    task = make_task("mod-arith-br:5")
    x, y = task.sample(4, L, batch_rng(seed, L))
    for row in range(4):
        toks = [task.vocab[i] for i in x[row]]
        assert len(toks) == L and toks[-1] == "="
        assert (y[row, :-1] == IGNORE).all()
        assert int(task.labels[y[row, -1]]) == _ast_value(toks[:-1], 5)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), L=st.integers(1, 25))
def test_mod_arith_without_brackets(seed, L):
    dig = make_task("mod-arith:5")             # 002: every digit position supervised
    last = make_task("mod-arith-nb:5")         # 000: one answer, at the last position
    x, y = dig.sample(4, L, batch_rng(seed, 0))
    x2, y2 = last.sample(4, L, batch_rng(seed, 0))
    assert np.array_equal(x, x2)
    for row in range(4):
        toks = [dig.vocab[i] for i in x[row]]
        for j, t in enumerate(toks):
            if t.isdigit():
                assert int(dig.labels[y[row, j]]) == _ast_value(toks[:j + 1], 5)
            else:
                assert y[row, j] == IGNORE
        assert (y2[row, :-1] == IGNORE).all()
        # the answer is the value of the longest prefix ending in a digit (a trailing operator changes nothing)
        end = L if L % 2 else L - 1
        assert int(last.labels[y2[row, -1]]) == _ast_value(toks[:end], 5)


def test_bad_task_names():
    for bad in ("sum:0", "mod-arith-br:x", "nosuch", ""):
        with pytest.raises(InputError):
            make_task(bad)


def _fold_left_to_right(toks: list, M: int) -> int:
    """004, Section 3: the operations applied sequentially, left to right, mod M (an independent fold)."""
    v = int(toks[0])
    for op, d in zip(toks[1::2], toks[2::2]):
        v = {"+": v + int(d), "-": v - int(d), "*": v * int(d)}[op] % M
    return v % M


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), L=st.integers(1, 25), M=st.sampled_from([2, 5, 7, 20]))
def test_mod_arith_left_to_right_against_a_fold(seed, L, M):
    task = make_task(f"mod-arith-lr:{M}")
    x, y = task.sample(6, L, batch_rng(seed, 0))
    assert task.chance == 1 / M and task.labels == tuple(str(d) for d in range(M))
    for row in range(6):
        toks = [task.vocab[i] for i in x[row]]
        assert all(t.isdigit() for t in toks[0::2]) and all(t in "+-*" for t in toks[1::2])
        assert (y[row, :-1] == IGNORE).all()          # one answer, at the last position (004, App. B.1)
        end = L if L % 2 else L - 1                   # a trailing operator changes nothing
        assert int(task.labels[y[row, -1]]) == _fold_left_to_right(toks[:end], M)


def test_mod_arith_left_to_right_is_not_precedence():
    """App. B.1's example '3 * 9 - 17 + 6 + 12' = 8 mod 20 applied left to right (with precedence: 28 mod 20 = 8
    as well, so a word where the two differ): 1 + 2 * 3 is 9 left to right, 7 with precedence (mod 20)."""
    fsa = make_task("mod-arith-lr:20").fsa
    word = lambda s: [fsa.alphabet.index(t) for t in s.split()]      # noqa: E731
    assert fsa.labels[fsa.trace_batch(np.array([word("3 * 9 - 17 + 6 + 12")]))[0, -1]] == "8"
    assert fsa.labels[fsa.trace_batch(np.array([word("1 + 2 * 3")]))[0, -1]] == "9"
    assert fsa.labels[fsa.trace_batch(np.array([word("1 + 2 *")]))[0, -1]] == "3"
    assert fsa.labels[fsa.trace_batch(np.array([word("+ 1")]))[0, -1]] == "error"
    with pytest.raises(InputError):
        make_task("mod-arith-lr:1")


@settings(max_examples=25, deadline=None)
@given(src=st.sampled_from(["parity", "sum:5", "group:S3", "mod-arith:5", "even-pair:3"]),
       seed=st.integers(0, 10**6), lo=st.integers(1, 8), extra=st.integers(0, 8))
def test_final_only_supervises_each_words_last_letter(src, seed, lo, extra):
    """``NAME+last`` (004 App. B.1's final-answer loss): the same words as ``NAME`` from the same seed and step, the
    target kept at each word's last letter (the automaton's output after the whole word, independently re-run
    here) and IGNORE at every other position; the task keeps its full name."""
    base, last = make_task(src), make_task(src + "+last")
    assert last.name == src + "+last" and last.supervise == "last" and last.vocab == base.vocab
    x0, y0, *_ = base.sample(16, (lo, lo + extra), batch_rng(seed, 3))
    x1, y1, *_ = last.sample(16, (lo, lo + extra), batch_rng(seed, 3))
    assert np.array_equal(x0, x1)
    fsa = base.fsa
    for row, w in zip(y1, _words(last, x1)):
        n = len(w)
        assert (row[: n - 1] == IGNORE).all() and (row[n:] == IGNORE).all()
        q = fsa.run([fsa.alphabet.index(a) for a in w])
        labels = list(last.labels)
        assert labels[row[n - 1]] == (fsa.outputs[q] if last.target == "output" else q)


def test_final_only_is_refused_where_it_cannot_apply():
    for bad in ("copy:5+last", "mod-arith-br:5+last", "S5-4tok+last", "parity+last+last", "+last"):
        with pytest.raises(InputError):
            make_task(bad)
