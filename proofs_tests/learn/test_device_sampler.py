"""lrnnkit.learn.device_sampler against lrnnkit.learn.tasks: reproducible batches, valid words with exact targets
(the FSA traced on the CPU, BracketArithTask.evaluate, the copied string), the same distribution as Task.sample
(chi-square homogeneity tests), static shapes without host synchronisation, and CUDA-graph capture (GPU only)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2_contingency

from lrnnkit.errors import InputError
from lrnnkit.learn.device_sampler import AutomatonSampler, BracketSampler, _tree_depth, device_sampler, mix32
from lrnnkit.learn.tasks import BLANK, IGNORE, batch_rng, make_task

AUTOMATA = ["parity", "group:S5", "S5-swaps", "S5-3perm", "S5-4tok", "Z60-2tok", "sum:5", "even-pair:5",
            "mod-arith:5", "mod-arith-nb:5", "group:A4", "mod-arith-lr:5", "sum:5+last"]
ALL = AUTOMATA + ["mod-arith-br:5", "copy:7"]
_TASKS = {}


@pytest.fixture(autouse=True)
def _one_thread():
    """The batches are small: one intra-op thread (two threads contend on a shared 2-core machine, ~10x slower)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _task(name, **kw):
    key = (name, tuple(sorted(kw.items())))
    if key not in _TASKS:
        _TASKS[key] = make_task(name, **kw)
    return _TASKS[key]


def _np(t):
    return t.cpu().numpy()


def _row_len(task, xrow):
    return int((xrow != task.pad_id).sum())


# ------------------------------------------------------------------------------------------ the CPU oracles
def _automaton_targets(task, xrow):
    """The targets of one word (token ids, no padding) from the FSA traced on the CPU, as tasks.py defines them."""
    fsa, k, L = task.fsa, task.k, len(xrow)
    toks = [task.vocab[i] for i in xrow]
    assert all(t == BLANK for j, t in enumerate(toks) if j % k), toks      # a letter, then k - 1 blanks
    letters = [int(i) for i in xrow[::k]]
    assert set(letters) <= set(int(a) for a in task.letters)
    if task.words == "alternate":
        assert all(fsa.alphabet[a].isdigit() == (i % 2 == 0) for i, a in enumerate(letters))
    states = [fsa.start] + fsa.trace(letters)
    cls = (lambda q: task.labels.index(fsa.outputs[q])) if task.target == "output" else (lambda q: q)
    y = [cls(states[(j - (k - 1)) // k + 1]) if j >= k - 1 else cls(fsa.start) for j in range(L)]
    if task.supervise == "last":
        y = [IGNORE] * (L - 1) + y[-1:]
    elif task.supervise == "digits":
        y = [v if toks[j].isdigit() else IGNORE for j, v in enumerate(y)]
    return y


def _well_formed(toks):
    """E = atom (op atom)*, atom = d | - d | ( E ): the language of E -> d | -d | (E) | E op E."""
    pos = [0]

    def atom():
        t = toks[pos[0]] if pos[0] < len(toks) else None
        pos[0] += 1
        if t == "-":
            t = toks[pos[0]] if pos[0] < len(toks) else None
            pos[0] += 1
            return t is not None and t.isdigit()
        if t == "(":
            if not expr() or pos[0] >= len(toks) or toks[pos[0]] != ")":
                return False
            pos[0] += 1
            return True
        return t is not None and t.isdigit()

    def expr():
        if not atom():
            return False
        while pos[0] < len(toks) and toks[pos[0]] in "+-*":
            pos[0] += 1
            if not atom():
                return False
        return True

    return expr() and pos[0] == len(toks)


def _check_batch(task, x, y, lo, hi):
    """Every row: a valid word of length lo..hi, padding after it, targets exactly the CPU machinery's."""
    x, y = _np(x), _np(y)
    for xr, yr in zip(x, y):
        n = _row_len(task, xr)
        assert (xr[n:] == task.pad_id).all() and (yr[n:] == IGNORE).all()
        if task.name.startswith("copy"):
            L = n // 2
            assert n == 2 * L and lo <= L <= hi
            w = xr[:L]
            assert (w < task.V).all() and xr[L] == task.V and (xr[L + 1:2 * L] == w[:-1]).all()
            assert (yr[:L] == IGNORE).all() and (yr[L:2 * L] == w).all()
            continue
        assert lo <= n <= hi
        if task.name.startswith("mod-arith-br"):
            toks = [task.vocab[i] for i in xr[:n]]
            assert toks[-1] == "=" and _well_formed(toks[:-1]), toks
            assert (yr[:n - 1] == IGNORE).all() and yr[n - 1] == task.evaluate(toks[:-1])
            continue
        assert list(yr[:n]) == _automaton_targets(task, xr[:n])


# ------------------------------------------------------------------------------------------ (a) reproducible
def test_mix32_is_the_same_on_ints_and_tensors_and_a_bijection_sample():
    xs = [0, 1, 2, 0xFFFFFFFF, 0x12345678]
    assert mix32(torch.tensor(xs)).tolist() == [mix32(v) for v in xs]
    v = mix32(torch.arange(1 << 16))
    assert int(v.max()) <= 0xFFFFFFFF and int(v.min()) >= 0 and len(set(v.tolist())) == 1 << 16


@pytest.mark.parametrize("name", ["S5-4tok", "mod-arith-nb:5", "mod-arith-br:5", "copy:7"])
def test_batch_is_a_function_of_seed_stream_and_step(name):
    task = _task(name)
    a = device_sampler(task, 16, (3, 12), 11, "cpu")
    fresh = device_sampler(task, 16, (3, 12), 11, "cpu")
    x5, y5 = a.sample(torch.tensor(5))
    for s in range(5):                                   # earlier batches do not change batch 5
        fresh.sample(torch.tensor(s))
    for other in (fresh.sample(torch.tensor(5)), a.sample(5)):
        assert torch.equal(other[0], x5) and torch.equal(other[1], y5)
    for differ in (a.sample(torch.tensor(6)), device_sampler(task, 16, (3, 12), 12, "cpu").sample(5),
                   device_sampler(task, 16, (3, 12), 11, "cpu", stream=1).sample(5)):
        assert not torch.equal(differ[0], x5)


@pytest.mark.parametrize("name", ["parity", "mod-arith:5", "mod-arith-br:5", "copy:7"])
def test_a_block_of_batches_is_the_batches_one_by_one(name):
    s = device_sampler(_task(name), 8, (2, 15), 9, "cpu")
    x, y = s.sample_block(torch.tensor(40), 3)
    assert x.shape == y.shape == (3, 8, s.T)
    for i in range(3):
        a, b = s.sample(40 + i)
        assert torch.equal(x[i], a) and torch.equal(y[i], b)


def test_huge_seed_and_step_are_folded_not_overflowed():
    s = device_sampler(_task("parity"), 8, 10, 2 ** 63 - 1, "cpu")
    a = s.sample(torch.tensor(2 ** 62))
    b = s.sample(torch.tensor(2 ** 62 + 1))
    assert not torch.equal(a[0], b[0])
    _check_batch(s.task, *a, 10, 10)


def test_bad_arguments_are_input_errors():
    for args in [(0, 5, 0), (4, (5, 3), 0), (4, 5, -1), (4, (0, 3), 0)]:
        with pytest.raises(InputError):
            device_sampler(_task("parity"), *args, "cpu")
    with pytest.raises(InputError, match="length >= 2"):
        device_sampler(_task("mod-arith-br:5"), 4, (1, 5), 0, "cpu")


# ------------------------------------------------------------------------------------------ (b) valid and exact
@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(ALL), seed=st.integers(0, 2 ** 40), step=st.integers(0, 10 ** 9),
       lo=st.integers(2, 14), extra=st.integers(0, 14))
def test_words_are_valid_and_targets_exact(name, seed, step, lo, extra):
    task = _task(name)
    s = device_sampler(task, 12, (lo, lo + extra), seed, "cpu")
    x, y = s.sample(torch.tensor(step))
    assert x.shape == y.shape == (12, s.T) and x.dtype == y.dtype == torch.int64
    _check_batch(task, x, y, lo, lo + extra)


@pytest.mark.parametrize("name,kw", [("group:S5", {"target": "state"}), ("S5-4tok", {"supervise": "last"}),
                                     ("Z60-2tok", {"supervise": "last", "target": "state"}),
                                     ("mod-arith:5", {"supervise": "all"})])
def test_options_targets_exact(name, kw):
    task = _task(name, **kw)
    s = device_sampler(task, 32, (1, 21), 3, "cpu")
    _check_batch(task, *s.sample(torch.tensor(0)), 1, 21)


def test_map_scan_equals_table_scan():
    """The (B, m, Q) map composition (automata with big monoids) gives the table lookup's batches."""
    for name in ("mod-arith:5", "S5-4tok", "even-pair:5"):
        t = _task(name)
        a = AutomatonSampler(t, 16, (1, 37), 4, "cpu")
        b = AutomatonSampler(t, 16, (1, 37), 4, "cpu", table_cap=1)
        assert a.scan == "table" and b.scan == "maps"
        for u, v in zip(a.sample(9), b.sample(9)):
            assert torch.equal(u, v)


def test_derivation_depth_is_half_the_length():
    """The static number of levels: the deepest derivation of n tokens has ceil(n / 2) levels (a chain of brackets
    around a digit or '- d'): the recursion over all splits agrees with that closed form for n <= 60."""
    assert _tree_depth(60)[1:] == [-(-n // 2) for n in range(1, 61)]


def test_brackets_long_words_exact():
    """The deepest trees of length 40 (about 20 levels): values against the recursive-descent evaluator."""
    task = _task("mod-arith-br:7")
    s = device_sampler(task, 64, (30, 40), 0, "cpu")
    assert isinstance(s, BracketSampler) and s.levels == 20      # floor(40 / 2): a chain of brackets
    for step in range(3):
        _check_batch(task, *s.sample(step), 30, 40)


# ------------------------------------------------------------------------------------------ (c) distribution
ALPHA = 1e-4      # significance of each chi-square test: about 45 here, so at most 0.5 % family-wise false alarms
#                   (Bonferroni); the seeds are fixed, so each test is deterministic
ROWS, BATCHES = 512, 4


def _stats(task, x, y):
    """Per-row statistics that are independent across rows (and letters, iid within a word): counters by name."""
    out = {"length": [], "label": [], "letter": [], "first": [], "depth": []}
    for xr, yr in zip(x, y):
        n = _row_len(task, xr)
        sup = np.nonzero(yr != IGNORE)[0]
        out["label"].append(int(yr[sup[-1]]))                 # one target per row: its last supervised one
        if task.name.startswith("copy"):
            out["length"].append(n // 2)
            out["letter"] += xr[:n // 2].tolist()
        elif task.name.startswith("mod-arith-br"):
            toks = [task.vocab[i] for i in xr[:n]]
            out["length"].append(n)
            out["first"].append(toks[0])
            depth = np.cumsum([(t == "(") - (t == ")") for t in toks])
            out["depth"].append(int(depth.max()))
        else:
            out["length"].append(n)
            out["letter"] += xr[:n:task.k].tolist()
    return {k: v for k, v in out.items() if v}


def _homogeneous(a, b):
    """p-value of a chi-square test that two samples come from one distribution (cells under 10 pooled)."""
    keys = sorted(set(a) | set(b), key=str)
    ca = np.array([a.count(k) for k in keys])
    cb = np.array([b.count(k) for k in keys])
    small = (ca + cb) < 10
    if small.any():
        ca = np.append(ca[~small], ca[small].sum())
        cb = np.append(cb[~small], cb[small].sum())
    if len(ca) < 2:
        return 1.0
    return chi2_contingency(np.stack([ca, cb]))[1]


@pytest.mark.parametrize("name,length", [("parity", (3, 40)), ("S5-swaps", 32), ("S5-3perm", 32), ("S5-4tok", (5, 16)),
                                         ("Z60-2tok", (3, 20)), ("group:S5", (2, 20)), ("sum:5", (3, 40)),
                                         ("even-pair:5", (3, 40)), ("mod-arith:5", (3, 40)),
                                         ("mod-arith-nb:5", (3, 40)), ("mod-arith-br:5", (3, 40)),
                                         ("copy:26", (5, 25)), ("mod-arith-lr:5", (2, 10))])
def test_same_distribution_as_task_sample(name, length):
    task = _task(name)
    dev = device_sampler(task, ROWS, length, 2024, "cpu")
    new = {}
    old = {}
    for s in range(BATCHES):
        for acc, (x, y) in ((new, map(_np, dev.sample(s))), (old, task.sample(ROWS, length, batch_rng(2024, s)))):
            for k, v in _stats(task, x, y).items():
                acc.setdefault(k, []).extend(v)
    assert set(new) == set(old)
    for k in new:
        p = _homogeneous(new[k], old[k])
        assert p > ALPHA, f"{name}: {k} histograms differ (chi-square p = {p:.2g})"


def test_chi_square_catches_a_wrong_length_distribution():
    """The test above has power: lengths drawn from 3..39 instead of 3..40 are rejected."""
    task = _task("parity")
    a = _stats(task, *map(_np, device_sampler(task, 2048, (3, 39), 1, "cpu").sample(0)))["length"]
    b = _stats(task, *task.sample(2048, (3, 40), batch_rng(1, 0)))["length"]
    assert _homogeneous(a, b) < ALPHA


# ------------------------------------------------------------------------------------------ (d) static, no sync
@pytest.mark.parametrize("name", ["S5-4tok", "mod-arith:5", "mod-arith-br:5", "copy:7"])
def test_shapes_static_and_no_host_synchronisation(name, monkeypatch):
    task = _task(name)
    s = device_sampler(task, 8, (2, 17), 0, "cpu")
    step = torch.tensor(0)

    def refuse(*a, **k):
        raise AssertionError("host synchronisation inside sample()")

    for attr in ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "nonzero", "unique",
                 "masked_select", "numpy", "cpu"):
        monkeypatch.setattr(torch.Tensor, attr, refuse)
    for fn in ("nonzero", "unique", "masked_select", "argwhere"):
        monkeypatch.setattr(torch, fn, refuse)
    shapes = {tuple(t.shape) for _ in range(4) for t in s.sample(step.add_(1))}
    monkeypatch.undo()
    assert shapes == {(8, s.T)}
    assert s.T == (34 if name.startswith("copy") else 17)


@pytest.mark.parametrize("name", ["S5-4tok", "mod-arith-nb:5", "mod-arith-br:5", "copy:7"])
def test_sample_runs_on_meta_tensors(name):
    """On the meta device no value exists: sample() reading one (a sync, a data-dependent shape) would fail."""
    s = device_sampler(_task(name), 8, (2, 17), 0, "meta")
    x, y = s.sample(torch.tensor(3, device="meta"))
    assert x.is_meta and y.is_meta and x.shape == y.shape == (8, s.T)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", ["S5-4tok", "mod-arith:5", "mod-arith-br:5", "copy:26"])
def test_cuda_graph_replay_with_in_graph_step_matches_eager(name):
    dev = torch.device("cuda")
    s = device_sampler(_task(name), 64, (3, 24), 5, dev)
    step = torch.zeros((), dtype=torch.int64, device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            s.sample(step)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x, y = s.sample(step)
        step.add_(1)
    step.fill_(10)
    for i in range(3):
        g.replay()
        ex, ey = s.sample(torch.tensor(10 + i, device=dev))
        assert torch.equal(x, ex) and torch.equal(y, ey)
    assert int(step) == 13


@pytest.mark.slow
@pytest.mark.parametrize("name", ["S5-4tok", "mod-arith:5", "mod-arith-br:5", "copy:7"])
def test_torch_compile_traces_sample_in_one_graph(name):
    """fullgraph=True: dynamo traces sample() without a graph break (a break would be a sync or a Python branch on
    data); the traced function gives the eager batches."""
    s = device_sampler(_task(name), 8, (3, 12), 0, "cpu")
    traced = torch.compile(s.sample, fullgraph=True, backend="aot_eager")
    for step in (3, 4):
        for u, v in zip(traced(torch.tensor(step)), s.sample(torch.tensor(step))):
            assert torch.equal(u, v)
