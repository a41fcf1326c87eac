"""FixedPointLayer's ``iteration="authors"``: the damped iteration and quantile stopping rule of 003's authors' code
(fp-rnn at 4c28602, models/model_utils.py, FixedPointOptimizer, with models/fp_mamba_block.py's settings), against
a transcription of that rule written here independently: a plain Python loop over the sequences, on Python floats,
that calls only the layer's map ``f(x, y)`` (one iteration). The layer's host loop, its training forward without
host reads, and :mod:`lrnnkit.learn.batched` (proofs_tests/learn/test_batched.py) all run
:func:`lrnnkit.layers.fixed_point.authors_iterate`.

Exact comparisons (``torch.equal``, ``==`` on floats) in float64: the transcription performs the same IEEE
operations in the same order on every element (a subtraction, an absolute value and a maximum per channel, one
division and one addition per token, ``h s + y (1 - s)`` per element), so a difference of even one ulp is a
wrong rule, not rounding."""
import copy
import math
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings, strategies as st

import lrnnkit.layers.fixed_point as fp
from lrnnkit.errors import InputError
from lrnnkit.layers.fixed_point import FixedPointLayer, FixedPointMixer, authors_iterate
from .test_fixed_point import D64, _assert_identical, _layer, _randomize_y_terms, _run

# the FPMamba settings, as written in fp-rnn at 4c28602 (models/fp_mamba_block.py and models/model_utils.py)
THEIRS = dict(stepsize=0.99, decay=0.9, patience=15, thresh=0.1, outlier=0.25, floor=1e-3, eps=1e-8)


# ------------------------------------------------------------------------------------------------ the transcription
def _fma(a: float, b: float, c: float) -> float:
    """``a b + c`` rounded once (exact rational arithmetic, then Python's correctly rounded conversion)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _quantile(vals, q):
    """numpy / torch 'linear' quantile of a list: position ``q (n - 1)``, then torch's two-sided lerp as its CPU
    kernel rounds it, one fused multiply-add (``a + w (b - a)`` for w < 1/2, else ``b - (b - a)(1 - w)``)."""
    v = sorted(vals)
    pos = q * (len(v) - 1)
    lo, hi = int(pos), math.ceil(pos)
    w = pos - lo
    a, b = v[lo], v[hi]
    return _fma(w, b - a, a) if w < 0.5 else _fma(-(b - a), 1 - w, b)


def reference(f, y0: torch.Tensor, seqs, cap: int, training: bool, **settings_):
    """The authors' rule on Python floats: ``seqs`` lists each sequence's tokens as (row, time) pairs of ``y0``
    (B, T, d); ``cap`` is their ``max_iter``, counted as their ``cont`` counts it (fp-rnn at 4c28602,
    models/model_utils.py (FixedPointOptimizer.cont): go on at ``iter_idx == 0``, else while the quantile, the step
    size and ``iter_idx < max_iter`` allow), so up to ``cap`` damped steps, at least one. Returns ``(y*, steps,
    state)``, state with the per-sequence best residues, step sizes, patience and why the loop ended ("cap",
    "threshold", "stepsize")."""
    c = dict(THEIRS, **settings_)
    q = 1 - c["outlier"] if training else 1.0
    live = [i for i, toks in enumerate(seqs) if toks]
    best = {i: math.inf for i in live}
    step = {i: c["stepsize"] for i in live}
    pat = {i: c["patience"] for i in live}
    y, it, why = y0.tolist(), 0, None
    while True:
        if it > 0:                                  # cont(): True at iter_idx 0, else the three tests in its order
            if not _quantile([best[i] for i in live], q) >= c["thresh"]:
                why = "threshold"
                break
            if not max(step[i] for i in live) >= c["floor"]:
                why = "stepsize"
                break
            if not it < cap:
                why = "cap"
                break
        h = f(torch.tensor(y, dtype=D64)).tolist()
        new = [[list(row) for row in plane] for plane in y]
        for i in live:
            e = max(max(abs(a - b) for a, b in zip(y[r][t], h[r][t])) / (max(abs(b) for b in h[r][t]) + c["eps"])
                    for r, t in seqs[i])
            s = step[i]
            for r, t in seqs[i]:
                new[r][t] = [b * s + a * (1 - s) for a, b in zip(y[r][t], h[r][t])]
            if e < best[i]:
                best[i], pat[i] = e, c["patience"]
            else:
                pat[i] -= 1
            if pat[i] == 0:
                pat[i] += c["patience"]
                step[i] = step[i] * c["decay"]
        y, it = new, it + 1
    return torch.tensor(y, dtype=D64), it, dict(best=best, step=step, patience=pat, why=why)


def _seqs(B, T, cu=None):
    if cu is None:
        return [[(b, t) for t in range(T)] for b in range(B)]
    cu = [int(v) for v in cu]
    return [[(0, t) for t in range(cu[i], cu[i + 1])] for i in range(len(cu) - 1)]


def test_the_transcriptions_quantile_is_torchs():
    """Bitwise torch.quantile / nanquantile (default 'linear', on the CPU) at the rule's q (0.75 and 1) and others,
    over sizes 1..9 and ties; nanquantile leaves NaNs (the layer's absent sequences) out. The lerp without the
    fused multiply-add is off by an ulp on some of these (the check can fail)."""
    g = torch.Generator().manual_seed(0)
    for n in range(1, 10):
        for _ in range(20):
            x = torch.rand(n, generator=g, dtype=D64)
            x[torch.rand(n, generator=g) < 0.3] = 0.5
            for q in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0):
                want = _quantile(x.tolist(), q)
                assert float(torch.quantile(x, q)) == want and float(torch.nanquantile(x, q)) == want
                assert float(torch.nanquantile(torch.cat([x, torch.tensor([math.nan], dtype=D64)]), q)) == want


# ---------------------------------------------------------------------------------------- layer vs transcription
def _authors(train_cap=16, **kw):
    layer = _layer(iteration="authors", train_max_iters=train_cap, sync_free=False, **kw)
    _randomize_y_terms(layer)
    return layer


def _with_reference(layer, cu=None, **settings_):
    """A copy of ``layer`` whose fixed point is the transcription's (the rest of the forward, the final
    differentiable iteration and the output, unchanged; ``settings_`` override :data:`THEIRS`); its state after
    each forward in ``.ref_state``."""
    ref = copy.deepcopy(layer)
    ref.sync_free = False

    def fixed_point(P, shape, starts=None, seg=None, cap=None, W=None, training=None):
        cap = ref.iteration_cap() if cap is None else cap
        train = ref.training if training is None else training
        y, it, state = reference(lambda y: ref.iteration(P, y, starts, W), torch.zeros(shape, dtype=D64),
                                 _seqs(shape[0], shape[1], cu), cap, train, **settings_)
        ref.ref_state = state
        return y, it
    ref.fixed_point = fixed_point
    return ref


def _stat(state, training):
    """The layer's last_residual as the transcription gives it: quantile_q of the best residues."""
    vals = list(state["best"].values())
    return _quantile(vals, 0.75 if training else 1.0)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 8), st.sampled_from([None, 1, 2]), st.integers(1, 14),
       st.sampled_from(["paper", "contractive"]), st.integers(0, 10**6))
def test_host_loop_and_sync_free_are_the_transcription(B, T, state_size, cap, alpha_range, seed):
    """Training (q = 0.75, the layer's cap; cap 1 included: one damped step before the final one, as theirs): the
    output, input and parameter gradients, iteration count and last residual of the host loop, of the training
    forward without host reads and of the transcription's fixed point are identical."""
    host = _authors(train_cap=cap, seed=seed % 1000, state_size=state_size, alpha_range=alpha_range).train()
    dev = copy.deepcopy(host)
    dev.sync_free = True
    ref = _with_reference(host)
    g = torch.Generator().manual_seed(seed)
    u, w = torch.randn(B, T, 6, dtype=D64, generator=g), torch.randn(B, T, 6, dtype=D64, generator=g)
    a, b, r = _run(host, u, w), _run(dev, u, w), _run(ref, u, w)
    assert isinstance(dev.last_iterations, torch.Tensor) and isinstance(host.last_iterations, int)
    _assert_identical(a, b)
    _assert_identical(a[:4] + (None,), r[:4] + (None,))
    assert 2 <= a[3] <= cap + 1 and a[4] == _stat(ref.ref_state, True)


@pytest.mark.parametrize("state_size", [None, 2])
@pytest.mark.parametrize("alpha_range", ["contractive", "paper"])
def test_evaluation_is_the_transcription_with_q_1(state_size, alpha_range):
    """Evaluation (q = 1, the largest best residue; cap 1000): the host loop equals the transcription; the two
    ranges stop by the threshold, and the batch of 3 sequences is decided by its slowest (the rule over q = 1)."""
    layer = _authors(state_size=state_size, alpha_range=alpha_range, seed=3).eval()
    ref = _with_reference(layer).eval()
    g = torch.Generator().manual_seed(4)
    u, w = torch.randn(3, 7, 6, dtype=D64, generator=g), torch.randn(3, 7, 6, dtype=D64, generator=g)
    a, r = _run(layer, u, w), _run(ref, u, w)
    _assert_identical(a[:4] + (None,), r[:4] + (None,))
    assert ref.ref_state["why"] == "threshold" and a[4] == _stat(ref.ref_state, False)
    assert a[4] == max(ref.ref_state["best"].values()) < THEIRS["thresh"]


@pytest.mark.parametrize("sync_free", [False, True])
def test_packed_sequences_are_the_transcription(sync_free):
    """cu_seqlens (sequences of 4, 1, 7 tokens and an empty one): residues, step sizes and the quantile per
    sequence, the empty one left out; equal to the transcription, and to the same sequences as batch rows where
    they have one length (4 and 4: no padding to tell them apart)."""
    layer = _authors(state_size=2, seed=5).train()
    layer.sync_free = sync_free
    g = torch.Generator().manual_seed(6)
    u, w = torch.randn(1, 12, 6, dtype=D64, generator=g), torch.randn(1, 12, 6, dtype=D64, generator=g)
    cu = torch.tensor([0, 4, 5, 12, 12])
    ref = _with_reference(layer, cu)
    a, r = _run(layer, u, w, cu_seqlens=cu), _run(ref, u, w, cu_seqlens=cu)
    _assert_identical(a[:4] + (None,), r[:4] + (None,))
    assert a[4] == _stat(ref.ref_state, True) and len(ref.ref_state["best"]) == 3
    cu2 = torch.tensor([0, 4, 8])
    packed = _run(layer, u[:, :8], w[:, :8], cu_seqlens=cu2)
    rows = _run(layer, u[:, :8].reshape(2, 4, 6), w[:, :8].reshape(2, 4, 6))
    assert packed[3] == rows[3] and torch.equal(packed[0].reshape(2, 4, 6), rows[0])


def test_paper_and_authors_differ_and_paper_is_the_default():
    """The default is the printed rule (the layer and the mixer); the authors' rule gives another iterate here
    (damped by 0.99 from the first step), so the comparisons above can tell the two apart."""
    assert FixedPointLayer(hidden_size=4, num_heads=1).iteration_rule == "paper"
    assert FixedPointMixer(8, 2, 4).layer.iteration_rule == "paper"
    assert FixedPointMixer(8, 2, 4, iteration="authors").layer.iteration_rule == "authors"
    paper = _layer(seed=7, sync_free=False).train()
    _randomize_y_terms(paper)
    authors = copy.deepcopy(paper)
    authors.iteration_rule = "authors"
    u = torch.randn(2, 6, 6, dtype=D64, generator=torch.Generator().manual_seed(8))
    assert not torch.equal(paper(u)[0], authors(u)[0])
    for bad in ("Paper", "damped", None, 1):
        with pytest.raises(InputError, match="iteration"):
            FixedPointLayer(hidden_size=4, num_heads=1, iteration=bad)
    assert "iteration='authors'" in repr(authors) and "iteration" not in repr(paper)


# ------------------------------------------------------------------------------------------------ damping engages
def test_patience_runs_out_and_the_step_size_shrinks(monkeypatch):
    """The paper's alpha range on large inputs, 60 iterations allowed: with the module's patience at 2 (read when a
    forward starts) the best residues stall for 2 steps, the step size shrinks (below 0.99 * 0.9^2 somewhere), and
    the layer's host loop and device-decided forward equal the transcription run with patience 2 -- and differ
    from the run at the authors' 15, so the constant is what the layer reads."""
    layer = _authors(train_cap=60, state_size=2, alpha_range="paper", seed=PATIENCE_CASE[0]).train()
    dev = copy.deepcopy(layer)
    dev.sync_free = True
    g = torch.Generator().manual_seed(PATIENCE_CASE[1])
    u, w = 3 * torch.randn(2, 9, 6, dtype=D64, generator=g), torch.randn(2, 9, 6, dtype=D64, generator=g)
    at15 = _run(layer, u, w)
    monkeypatch.setattr(fp, "AUTHORS_DECAY_PATIENCE", 2)
    ref = _with_reference(layer, patience=2)
    a, b, r = _run(layer, u, w), _run(dev, u, w), _run(ref, u, w)
    _assert_identical(a, b)
    _assert_identical(a[:4] + (None,), r[:4] + (None,))
    assert min(ref.ref_state["step"].values()) < THEIRS["stepsize"] * THEIRS["decay"] ** 2, ref.ref_state
    assert not torch.equal(a[0], at15[0])


PATIENCE_CASE = (9, 10)       # (layer seed, input seed)


def test_a_non_contractive_map_stops_by_the_step_size():
    """``f(y) = 2 y`` from ``y = 2^40`` (d = 3, two sequences): the printed rule never holds (the relative change is
    1/2 at every iteration) and runs to its cap (100). Under the authors' rule the residue ``|y| / (2 |y| + 1e-8)`` is
    exactly 1/2 at every step (``|y| >= 2^40`` only grows, by ``1 + s``, and the 1e-8 is below half an ulp of
    ``2 |y|``), so no best improves after the first step (improving is strictly below), the step size decays every
    15 steps and the loop ends when it falls below 1e-3: after 66 decays, step 1 + 66 * 15 = 991
    (0.99 * 0.9^65 > 1e-3 > 0.99 * 0.9^66), within the evaluation cap. The host exit, the static bound (as in
    training, bound 1000) and the transcription agree; at a training cap of 16 all run to the cap: 16 damped steps,
    as the authors' ``max_iter`` = 16."""
    assert 0.99 * 0.9 ** 65 > 1e-3 > 0.99 * 0.9 ** 66
    y0 = torch.full((2, 4, 3), 2.0 ** 40, dtype=D64)
    double = lambda y: 2 * y          # noqa: E731
    cap = torch.tensor(1000)
    y_h, it_h, stat_h = authors_iterate(double, y0, cap, 1000, False, exit_when_done=True)
    y_s, it_s, stat_s = authors_iterate(double, y0, cap, 1000, False)
    y_r, it_r, state = reference(double, y0, _seqs(2, 4), 1000, False)
    assert int(it_h) == int(it_s) == it_r == 991 and state["why"] == "stepsize"
    assert torch.equal(y_h, y_r) and torch.equal(y_s, y_r) and float(stat_h) == float(stat_s)
    assert float(stat_h) == 0.5 and max(state["step"].values()) < 1e-3
    # the printed rule on the same map: ||y^l - y^{l-1}|| / ||y^l|| = 1/2 > tol at every iteration: to its cap
    # (100, the layer's max_iters; 2^40 * 2^99 stays finite, where 1000 plain doublings would overflow)
    ok = torch.tensor(False)
    it_p = fp.freeze_iterate(double, lambda new, old: ((new - old).abs().amax() <= 0.1 * new.abs().amax(), ok),
                             y0, torch.tensor(100), 100, exit_when_done=True)[1]
    assert int(it_p) == 99
    _, it16, _ = authors_iterate(double, y0, torch.tensor(16), 16, True, exit_when_done=True)
    assert int(it16) == reference(double, y0, _seqs(2, 4), 16, True)[1] == 16


# ------------------------------------------------------------------------------------------------ caps
def test_evaluation_cap_is_1000_and_training_keeps_its_cap(monkeypatch):
    """With the threshold and the step-size floor at 0 (module constants) the rule never stops, so the caps show, as
    damped steps before the final differentiable one (their ``max_iter``): at evaluation the authors' rule runs 1001
    iterations in all (1000 damped + the final one; ``max_iters`` = 5 is not its cap), in training 13 (the training
    cap, 12, + 1), the sampled cap + 1 too; the printed rule keeps ``max_iters`` iterations in all (5)."""
    monkeypatch.setattr(fp, "AUTHORS_THRESH", 0.0)
    monkeypatch.setattr(fp, "AUTHORS_STEPSIZE_THRESH", 0.0)
    layer = _authors(train_cap=12, max_iters=5, seed=11)
    u = torch.randn(1, 3, 6, dtype=D64, generator=torch.Generator().manual_seed(12))
    layer.eval()
    assert layer.iteration_cap() == fp.AUTHORS_EVAL_MAX_ITERS == 1000
    layer(u)
    assert layer.last_iterations == 1001
    layer.train()
    layer(u)
    assert layer.last_iterations == 13
    layer.sync_free = True
    layer(u)
    assert int(layer.last_iterations) == 13
    layer.sample_max_iters = True
    torch.manual_seed(0)
    cap = int(layer.device_cap("cpu"))
    torch.manual_seed(0)
    layer(u)
    assert int(layer.last_iterations) == cap + 1 and cap <= 12
    paper = _layer(seed=11, train_max_iters=12, max_iters=5, tol=1e-300, sync_free=False).eval()
    paper(u)
    assert paper.iteration_cap() == 5 and paper.last_iterations == 5


def _count_damped(layer):
    """Wrap ``layer.iteration`` to count its calls under no_grad (the damped steps; the final one runs with grad)."""
    calls = []
    inner = layer.iteration

    def counted(*a, **k):
        calls.append(torch.is_grad_enabled())
        return inner(*a, **k)
    layer.iteration = counted
    return calls


@pytest.mark.parametrize("mode", ["train", "train sync-free", "eval"])
def test_cap_c_runs_min_of_c_and_the_steps_to_stop_and_one_more(monkeypatch, mode):
    """Cap c counts damped steps as the authors' ``max_iter`` (fp-rnn at 4c28602, models/model_utils.py
    (FixedPointOptimizer.cont): go on at the first step, else while ``iter_idx < max_iter`` and the tests allow):
    with k the damped steps the rule takes to stop on its own (a cap of 60 it does not reach; 7 here, training and
    evaluation), cap c = 1 .. k + 2 runs exactly min(c, k) damped steps and ``last_iterations`` = min(c, k) + 1;
    cap 1 still runs one. The cap is the training cap in training (host loop and the device-decided forward, which
    always calls the map c times under no_grad, its static bound, and applies min(c, k)) and
    :data:`AUTHORS_EVAL_MAX_ITERS` at evaluation (set to c here). Counted by the layer and by the calls of its map
    under no_grad (host loop); the output equals the transcription's with cap c (its count too)."""
    layer = _authors(train_cap=60, state_size=2, alpha_range="contractive", seed=2)
    layer.train(mode.startswith("train"))
    layer.sync_free = mode == "train sync-free"
    u = 2 * torch.randn(2, 7, 6, dtype=D64, generator=torch.Generator().manual_seed(102))
    w = torch.randn(2, 7, 6, dtype=D64, generator=torch.Generator().manual_seed(103))
    monkeypatch.setattr(fp, "AUTHORS_EVAL_MAX_ITERS", 60)
    k = _run(layer, u, w)[3] - 1
    assert k == 7
    for c in range(1, k + 3):
        layer.train_max_iters = c
        monkeypatch.setattr(fp, "AUTHORS_EVAL_MAX_ITERS", c)
        assert layer.iteration_cap() == c
        run = copy.deepcopy(layer)
        calls = _count_damped(run)
        got = _run(run, u, w)
        assert got[3] == min(c, k) + 1, (c, got[3])
        assert calls.count(True) == 1 and calls.count(False) == (c if run.sync_free else min(c, k)), (c, calls)
        ref = _with_reference(layer).train(layer.training)
        want = _run(ref, u, w)
        _assert_identical(got[:4] + (None,), want[:4] + (None,))
        assert ref.ref_state["why"] == ("cap" if c < k else "threshold"), (c, ref.ref_state["why"])


def test_stacked_runs_count_each_its_own_cap():
    """:func:`authors_iterate` with an (R,) cap, as :mod:`lrnnkit.learn.batched` calls it: R = 6 copies of one
    iteration (``f(y) = y / 2 + 1``, 4 steps to stop at evaluation by the transcription) under caps 0, 1, 2, 3, 4,
    7 run max(1, min(c, 4)) damped steps each, each run's iterate that of the run alone with its 0-d cap and the
    transcription's with that cap, in the static loop and the host exit alike."""
    f = lambda y: y / 2 + 1          # noqa: E731
    y0 = torch.zeros(2, 3, 4, dtype=D64)
    k = reference(f, y0, _seqs(2, 3), 1000, False)[1]
    assert k == 4
    caps = torch.tensor([0, 1, 2, 3, 4, 7])
    for exit_ in (False, True):
        y, it, _ = authors_iterate(f, y0.expand(6, 2, 3, 4).clone(), caps, 7, False, exit_when_done=exit_)
        assert it.tolist() == [1, 1, 2, 3, 4, 4]
        for r, c in enumerate(caps.tolist()):
            y_r, it_r, _ = authors_iterate(f, y0, torch.tensor(c), max(c, 1), False)
            y_ref, n_ref, _ = reference(f, y0, _seqs(2, 3), c, False)
            assert int(it_r) == n_ref == int(it[r]) and torch.equal(y[r], y_r) and torch.equal(y_r, y_ref)


def test_bench_fixed_point_rules_smoke(tmp_path):
    """benchmarks/fixed_point_rules.py --smoke: 003-state-tracking's tiny fixed-point configuration trained with the
    authors' rule on the CPU, then read under both rules at each length: the readings carry both rules, the paper
    rule never runs past its evaluation cap (100 iterations in all) and the authors' past its own (1000 damped
    steps + the final one), and the run's steps and rule are recorded."""
    import json

    from benchmarks import fixed_point_rules
    out = tmp_path / "r.json"
    assert fixed_point_rules.main(["--smoke", "--keep", str(tmp_path / "k"), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["train_rule"] == "authors" and doc["steps"] == doc["steps_configured"] and not doc["stopped_early"]
    got = {(r["rule"], r["length"]): r for r in doc["readings"]}
    assert set(got) == {(rule, L) for rule in ("paper", "authors") for L in (2, 16)}
    assert all(0.0 <= r["accuracy"] <= 1.0 for r in got.values())
    assert all(1 <= r["iterations"] <= 100 for (rule, _), r in got.items() if rule == "paper")
    assert all(2 <= r["iterations"] <= 1001 for (rule, _), r in got.items() if rule == "authors")


def test_bench_fixed_point_rules_refuses_a_configuration_the_experiment_lacks():
    """r = 3 is no configuration of 003-state-tracking: refused in one line before anything trains."""
    from benchmarks import fixed_point_rules
    from lrnnkit.errors import InputError
    with pytest.raises(InputError, match="no configuration 'S5 fixed-point r=3 1L'"):
        fixed_point_rules.configured("S5", 3, 0, "authors", False, "cpu", None)
