"""Several runs as one batched model (lrnnkit.learn.batched): R runs stacked compute what R separate SequenceModels
with the same weights compute -- outputs, per-run losses, per-run gradients, and the parameters after k AdamW steps
with per-run learning rates and clipping -- each run draws its own seed's batches, a non-finite run is skipped
alone, and one run is the single-run device loop. CPU, float64 where the comparison is of the same arithmetic in
another order (tolerance 1e-9: float64 rounding, ~1e-16 relative, grown through a few layers, Adam's division and
a few steps stays many orders below it, while any wrong weight, run or step is off by far more)."""
import dataclasses
import json
import os
import shutil

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.learn.batched import (BatchedSequenceModel, BatchedStep, adamw_update, build_batched, check_runs,
                                   difference_from_separate, run_losses, train_batched)
from lrnnkit.learn.device_sampler import device_sampler
from lrnnkit.learn.models import SequenceModel
from lrnnkit.learn.step import lr_schedule
from lrnnkit.learn.tasks import IGNORE, make_task
from lrnnkit.learn.train import TrainConfig, load_checkpoint, train

TOL = 1e-9
# the mixers covered, each with the options that change its parameter set
KINDS = {
    "deltaproduct": dict(layer="deltaproduct", n_h=2, gate=True, mlp=True),
    "deltanet": dict(layer="deltanet", eig_range=(0.0, 1.0), short_conv=False, output_gate=False),
    "diagonal": dict(layer="diagonal", eig_range=(-1.0, 1.0), layers=2),
    "block-diagonal": dict(layer="block-diagonal", block_size=4),
    "fixed-point": dict(layer="fixed-point", n_h=2, block_size=4),            # the matrix state (003, eq. 6)
    "fixed-point-vector": dict(layer="fixed-point", n_h=1, block_size=1, eig_range=(0.0, 1.0)),   # eq. 4
    # the authors' damped iteration and quantile stopping rule (lrnnkit.layers.fixed_point, module text)
    "fixed-point-authors": dict(layer="fixed-point", n_h=2, block_size=4, fp_iteration="authors"),
    "mamba": dict(layer="mamba", eig_range=(-1.0, 1.0), layers=2),
}


def _models(kind: str, R: int, vocab: int = 3, n_out: int = 2):
    kw = dict(vocab=vocab, n_out=n_out, width=16, heads=2, backend="auto", **KINDS[kind])
    out = []
    for r in range(R):
        torch.manual_seed(100 + r)
        out.append(SequenceModel(**kw).double())
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(max_examples=3, deadline=None)
@given(R=st.integers(1, 3), B=st.integers(1, 3), T=st.integers(1, 12),
       seed=st.integers(0, 2**16))
def test_outputs_losses_gradients_are_the_separate_models(kind, R, B, T, seed):
    models = _models(kind, R)
    bm = BatchedSequenceModel(models)
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 3, (R, B, T), generator=g)
    y = torch.randint(0, 2, (R, B, T), generator=g)
    y[:, :, 0] = IGNORE                                      # some labels left out, as in the tasks
    y[:, 0, -1] = 1
    logits = bm(x)
    losses = run_losses(logits, y)
    (grad,) = torch.autograd.grad(losses.sum(), bm.flat)
    for r, m in enumerate(models):
        ref = m(x[r])
        assert torch.allclose(logits[r], ref, atol=TOL, rtol=0)
        loss = torch.nn.functional.cross_entropy(ref.reshape(-1, 2), y[r].reshape(-1), ignore_index=IGNORE)
        assert abs(float(losses[r].detach()) - float(loss.detach())) <= TOL
        ps = list(m.parameters())
        gs = torch.autograd.grad(loss, ps, allow_unused=True)     # T = 1: a layer's w (diagonal) may go unused
        ref_g = torch.cat([(torch.zeros_like(p) if t is None else t).reshape(-1) for p, t in zip(ps, gs)])
        assert torch.allclose(grad[r], ref_g, atol=TOL, rtol=0)       # run r's gradient and nobody else's
        assert torch.equal(bm.unstack(r).state_dict()["head.weight"], m.state_dict()["head.weight"])


def test_fixed_point_runs_stop_each_at_its_own_iteration():
    """003's stopping rule (App. D.2) holds per run: four runs whose own batches converge after 5, 5, 8 and 7
    iterations (each alone, the layer's ``last_iterations``) give, batched, each its own output, not the output of
    iterating all four until the slowest converges (which a rule over the folded batch would do)."""
    models = _models("fixed-point", 4)
    x = torch.randint(0, 3, (4, 3, 12), generator=torch.Generator().manual_seed(0))
    alone = []
    for r, m in enumerate(models):
        alone.append(m(x[r]))
        alone[-1] = (alone[-1], int(m.mixers[0].last_iterations))
    assert [it for _, it in alone] == [5, 5, 8, 7]
    bm = BatchedSequenceModel(models)
    got = bm(x)
    for r, (ref, _) in enumerate(alone):
        assert torch.allclose(got[r], ref, atol=TOL, rtol=0)
    bm.eval()                                     # evaluation: each run's host loop up to 100 iterations, per run
    got = bm(x)
    for r, m in enumerate(models):
        assert torch.allclose(got[r], m.eval()(x[r]), atol=TOL, rtol=0)
    iterated = models[0]
    iterated.mixers[0].layer.tol = 0.0            # run 0 iterated to the cap instead: a different output
    assert not torch.allclose(iterated(x[0]), alone[0][0], atol=TOL, rtol=0)


def test_fixed_point_runs_keep_their_own_authors_state(monkeypatch):
    """The authors' rule per run: each run's residues, step sizes, patience and quantile over its own 3 sequences.
    Four runs whose batches stop alone after different counts give, batched, each its own output, in training
    (the sync-free path, q = 0.75) and at evaluation (q = 1, cap 1000 damped steps); a rule over the folded batch
    would run them all as long as the slowest, and the fastest run iterated that long (threshold 0, capped at the
    slowest count less the final iteration: caps count damped steps, as the authors' max_iter) gives another
    output, so the comparison can tell. With the threshold at 0 no run stops before its cap, so training cap c
    (1 and 2; every run's, the batched template's among them) runs c damped steps + the final one alone, and
    batched each run's output is the same."""
    import lrnnkit.layers.fixed_point as fp
    models = _models("fixed-point-authors", 4)
    x = torch.randint(0, 3, (4, 3, 12), generator=torch.Generator().manual_seed(0))
    bm = BatchedSequenceModel(models)
    for mode in ("train", "eval"):
        for m in models + [bm]:
            getattr(m, mode)()
        alone = [(m(x[r]), int(m.mixers[0].last_iterations)) for r, m in enumerate(models)]
        counts = [it for _, it in alone]
        assert len(set(counts)) > 1, counts
        got = bm(x)
        for r, (ref, _) in enumerate(alone):
            assert torch.allclose(got[r], ref, atol=TOL, rtol=0), (mode, r)
    fast = min(range(4), key=lambda r: counts[r])
    monkeypatch.setattr(fp, "AUTHORS_THRESH", 0.0)
    for c in (1, 2):
        for m in models + [bm]:
            m.train()
        for m in models:
            m.mixers[0].layer.train_max_iters = c
        got = bm(x)
        for r, m in enumerate(models):
            assert torch.allclose(got[r], m(x[r]), atol=TOL, rtol=0), (c, r)
            assert int(m.mixers[0].last_iterations) == c + 1
    models[fast].mixers[0].layer.train_max_iters = max(counts) - 1
    assert not torch.allclose(models[fast](x[fast]), alone[fast][0], atol=TOL, rtol=0)
    assert int(models[fast].mixers[0].last_iterations) == max(counts)


def _cfgs(kind: str, R: int, **kw):
    base = dict(task="parity", width=16, heads=2, steps=6, batch=6, train_len=(2, 9), test_len=(9,), eval_n=16,
                weight_decay=0.1, clip=0.05, warmup=0.3, log_every=2, **KINDS[kind])
    base.update(kw)
    return [TrainConfig(seed=s, lr=3e-3 * (s + 1), **base) for s in range(R)]


@pytest.mark.parametrize("kind", ["deltaproduct", "diagonal", "block-diagonal", "fixed-point", "fixed-point-authors",
                                  "mamba"])
def test_k_steps_are_separate_adamw_runs(kind):
    """k = 4 batched steps (per-run lr schedules, one of them constant; clipping at 0.05 active; weight decay)
    against each run trained alone with torch.optim.AdamW and clip_grad_norm_ on the batches its seed draws."""
    cfgs = _cfgs(kind, 3)
    cfgs[1] = dataclasses.replace(cfgs[1], warmup=0.0, min_lr=cfgs[1].lr)      # a constant schedule (protocols)
    cfgs[2] = dataclasses.replace(cfgs[2], min_lr=1e-4)
    task = make_task("parity")
    models = []
    for c in cfgs:
        torch.manual_seed(c.seed)
        models.append(SequenceModel(**c.model_kwargs(task)).double())
    bm = BatchedSequenceModel([SequenceModel(**m.config).double().requires_grad_() for m in models])
    with torch.no_grad():
        bm.flat.copy_(torch.stack([torch.cat([p.reshape(-1) for p in m.parameters()]) for m in models]))
    step = BatchedStep(cfgs, task, bm, torch.device("cpu"))
    K = 4
    for _ in range(K):
        step.run()
    for r, (c, m) in enumerate(zip(cfgs, models)):
        opt = torch.optim.AdamW([{"params": [p for p in m.parameters() if p.ndim >= 2], "weight_decay": c.weight_decay},
                                 {"params": [p for p in m.parameters() if p.ndim < 2], "weight_decay": 0.0}],
                                lr=c.lr, betas=(0.9, 0.999), eps=1e-8)
        sampler = device_sampler(task, c.batch, c.train_len, c.seed, "cpu")
        lrs = lr_schedule(c).float().double()                  # the batched step's table is float32
        for s in range(K):
            xb, yb = sampler.sample(torch.tensor(s))
            for gr in opt.param_groups:
                gr["lr"] = float(lrs[s])
            loss = torch.nn.functional.cross_entropy(m(xb).reshape(-1, 2), yb.reshape(-1), ignore_index=IGNORE)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), c.clip)
            opt.step()
        got = bm.unstack(r)
        for (nm, a), b in zip(m.named_parameters(), got.parameters()):
            assert torch.allclose(a, b, atol=TOL, rtol=0), (r, nm, float((a - b).abs().max().detach()))
    assert step.opt_steps.tolist() == [K] * 3 and step.nonfinite == [0, 0, 0]


def test_a_nonfinite_run_is_skipped_alone():
    """Run 1's gradient holds an inf: its parameters, moments and step count stay; run 0 updates exactly as it
    would alone."""
    g = torch.Generator().manual_seed(0)
    flat = torch.randn(2, 7, generator=g, dtype=torch.float64)
    grad = torch.randn(2, 7, generator=g, dtype=torch.float64)
    m, v = torch.randn(2, 7, generator=g, dtype=torch.float64), torch.rand(2, 7, generator=g, dtype=torch.float64)
    grad[1, 3] = float("inf")
    mask = torch.tensor([1, 1, 0, 1, 0, 0, 1], dtype=torch.float64)
    args = [t.clone() for t in (flat, m, v)], torch.tensor([2.0, 5.0]), torch.tensor([1e-2, 3e-2])
    (f2, m2, v2), steps, lr = args
    ok = adamw_update(f2, grad, m2, v2, steps, lr, 0.1, mask, 1.0)
    assert ok.tolist() == [True, False] and steps.tolist() == [3.0, 5.0]
    assert torch.equal(f2[1], flat[1]) and torch.equal(m2[1], m[1]) and torch.equal(v2[1], v[1])
    f1, m1, v1 = flat[:1].clone(), m[:1].clone(), v[:1].clone()
    adamw_update(f1, grad[:1], m1, v1, torch.tensor([2.0]), lr[:1], 0.1, mask, 1.0)
    assert torch.equal(f1[0], f2[0]) and torch.equal(m1[0], m2[0]) and not torch.equal(f2[0], flat[0])


def test_a_diverged_run_does_not_touch_the_others():
    """Run 1's weights poisoned (a NaN in its head): its steps are all skipped and counted, its parameters stay;
    run 0 trains as it does without run 1 beside it (float64; tolerance 1e-12: the same ops on fewer rows)."""
    cfgs = _cfgs("diagonal", 2)
    task = make_task("parity")

    def stepped(cfgs, poison):
        _, bm = build_batched(cfgs)
        bm.double()
        with torch.no_grad():
            if poison:
                bm.flat[1, -1] = float("nan")                 # the head's last bias
        before = bm.flat.detach().clone()
        st = BatchedStep(cfgs, task, bm, torch.device("cpu"))
        for _ in range(4):
            st.run()
        return bm.flat.detach(), before, st

    both, before, st = stepped(cfgs, True)
    alone, _, _ = stepped(cfgs[:1], False)
    assert st.nonfinite == [0, 4] and st.opt_steps.tolist() == [4.0, 0.0]
    assert torch.equal(both[1].nan_to_num(7.0), before[1].nan_to_num(7.0))
    assert torch.allclose(both[0], alone[0], atol=1e-12, rtol=0) and not torch.equal(both[0], before[0])


@pytest.mark.parametrize("task", ["parity", "mod-arith-br:5", "copy:4"])   # the three kinds of device sampler
def test_each_run_draws_its_own_seeds_batches(task):
    cfgs = _cfgs("diagonal", 3, task=task)
    task, bm = build_batched(cfgs)
    step = BatchedStep(cfgs, task, bm, torch.device("cpu"))
    for s in (0, 7):
        x, y = step.batch(torch.tensor(s))
        assert x.shape[0] == 3
        for r, c in enumerate(cfgs):
            xr, yr = device_sampler(task, c.batch, c.train_len, c.seed, "cpu").sample(torch.tensor(s))
            assert torch.equal(x[r], xr) and torch.equal(y[r], yr)
        assert not torch.equal(x[0], x[1]) and not torch.equal(x[1], x[2])


def test_one_run_is_the_device_loop(tmp_path):
    """R = 1 against ``train(loop="device")`` (float32 on the CPU): the same initialisation, batches, schedule and
    update rule, computed by other kernels (batched matmuls, the update written out), so the parameters agree to
    float32 rounding grown by Adam over 6 steps: atol 1e-4 against a total movement of ~1e-2 per parameter (lr 3e-3,
    6 steps). The result has every field the single run's has, and the checkpoint loads as one of its."""
    (c,) = _cfgs("deltaproduct", 1, loop="device")
    ref = train(c, str(tmp_path / "alone"))
    (got,) = train_batched([c], [str(tmp_path / "batched")])
    moved = 0.0
    torch.manual_seed(c.seed)
    init = SequenceModel(**c.model_kwargs(make_task("parity")))
    for a, b, p0 in zip(ref["_model"].parameters(), got["_model"].parameters(), init.parameters()):
        assert torch.allclose(a, b, atol=1e-4, rtol=0)
        moved = max(moved, float((a - p0).abs().max().detach()))
    assert moved > 1e-3                                   # the comparison is not of two untrained models
    assert set(ref) <= set(got) and got["steps"] == ref["steps"] == c.steps
    assert abs(got["train_accuracy"] - ref["train_accuracy"]) <= 0.05
    lines = [json.loads(x) for x in open(tmp_path / "batched" / "metrics.jsonl")]
    ref_lines = [json.loads(x) for x in open(tmp_path / "alone" / "metrics.jsonl")]
    assert [x["step"] for x in lines] == [x["step"] for x in ref_lines] == [2, 4, 6]
    assert all(abs(a["lr"] - b["lr"]) <= 1e-9 and abs(a["loss"] - b["loss"]) <= 1e-4 for a, b in zip(lines, ref_lines))
    doc, model = load_checkpoint(str(tmp_path / "batched"))
    assert doc["step"] == c.steps and doc["progress"]["loop"] == "device"
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), got["_model"].parameters()))


def test_runs_of_other_shapes_are_refused(tmp_path):
    cfgs = _cfgs("diagonal", 2)
    check_runs(cfgs)
    with pytest.raises(InputError, match="run 1 differs from run 0 in width"):
        check_runs([cfgs[0], dataclasses.replace(cfgs[1], width=32)])
    with pytest.raises(InputError, match="bilinear"):
        check_runs(_cfgs("diagonal", 1, layer="bilinear"))
    with pytest.raises(InputError, match="auto_steps"):
        check_runs(_cfgs("diagonal", 1, auto_steps=True, max_seconds=5.0))
    with pytest.raises(InputError, match="2 distinct run directories"):
        train_batched(cfgs, [str(tmp_path / "a"), str(tmp_path / "a")])
    with pytest.raises(SizeLimitError, match="TRAIN_MAX_BATCH_TOKENS"):
        check_runs(_cfgs("diagonal", 3, batch=2 ** 16, train_len=(2, 200)))   # one run fits, 3 do not
    with pytest.raises(InputError, match="--loop host does not apply"):
        check_runs(_cfgs("diagonal", 1, loop="host"))
    (tmp_path / "b").mkdir()
    train(dataclasses.replace(cfgs[0], loop="device"), str(tmp_path / "b"), evaluate_at_end=False)
    with pytest.raises(InputError, match="resumes all its runs or none"):
        train_batched(cfgs, [str(tmp_path / "b"), str(tmp_path / "c")])
    assert not os.path.exists(tmp_path / "c" / "checkpoint.json")
    train(dataclasses.replace(cfgs[1], loop="device"), str(tmp_path / "c"), evaluate_at_end=False)
    with pytest.raises(InputError, match="other settings"):     # a checkpoint of another config: refused as alone
        train_batched([dataclasses.replace(cfgs[0], steps=7), dataclasses.replace(cfgs[1], steps=7)],
                      [str(tmp_path / "b"), str(tmp_path / "c")])


@pytest.mark.parametrize("kind", ["deltaproduct", "diagonal"])
def test_a_stopped_batched_run_resumes_to_the_uninterrupted_one(kind, tmp_path):
    """Stopped after 3 of 6 steps (a checkpoint per run), resumed: the parameters, the metrics and the last
    checkpoint's optimizer state equal the uninterrupted batched run's bit for bit (the same ops in the same order
    on the CPU; the batches depend on the seed and the step only)."""
    cfgs = _cfgs(kind, 2)
    a = [str(tmp_path / f"a{r}") for r in range(2)]
    b = [str(tmp_path / f"b{r}") for r in range(2)]
    whole = train_batched(cfgs, a, evaluate_at_end=False)
    first = train_batched(cfgs, b, evaluate_at_end=False, stop_at=3)
    assert [r["steps"] for r in first] == [3, 3]
    shutil.copytree(b[1], tmp_path / "alone")
    second = train_batched(cfgs, b, evaluate_at_end=False)
    # run 1's checkpoint continued by the single-run device loop: the same run (float32 rounding of other kernels,
    # the tolerance of test_one_run_is_the_device_loop)
    alone = train(dataclasses.replace(cfgs[1], loop="device"), str(tmp_path / "alone"), evaluate_at_end=False)
    assert alone["steps"] == 6
    assert all(torch.allclose(x, y, atol=1e-4, rtol=0)
               for x, y in zip(whole[1]["_model"].parameters(), alone["_model"].parameters()))
    for w, s, da, db in zip(whole, second, a, b):
        assert s["steps"] == 6
        assert all(torch.equal(x, y) for x, y in zip(w["_model"].parameters(), s["_model"].parameters()))
        strip = lambda d: [{k: v for k, v in json.loads(x).items() if k != "seconds"}   # noqa: E731
                           for x in open(os.path.join(d, "metrics.jsonl"))]
        assert strip(da) == strip(db) and len(strip(db)) == 3
        ta, tb = load_checkpoint(da)[0]["_tensors"], load_checkpoint(db)[0]["_tensors"]
        assert ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)


TINY = ["train", "parity", "--layer", "diagonal", "--width", "8", "--heads", "2", "--steps", "3", "--batch", "4",
        "--train-len", "2:4", "--test-len", "6,8"]


def test_the_command_line_trains_every_seed_and_lr(tmp_path, capsys):
    from lrnnkit.cli import main
    out = tmp_path / "runs"
    assert main(TINY + ["--seeds", "0,5", "--lrs", "1e-2,3e-3", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    want = {(s, lr) for s in (0, 5) for lr in (1e-2, 3e-3)}
    assert {(r["config"]["seed"], r["config"]["lr"]) for r in printed} == want
    for s, lr in want:
        d = out / f"seed-{s}-lr-{lr:g}"
        res = json.loads((d / "result.json").read_text())
        assert res["steps"] == 3 and res["config"]["seed"] == s and res["batched"]["runs"] == 4
        doc, _ = load_checkpoint(str(d))
        assert doc["config"]["lr"] == lr and doc["step"] == 3


@pytest.mark.parametrize("extra,needle", [(["--seeds", "0,x"], "--seeds expects comma-separated values"),
                                          (["--lrs", "1e-3,-1"], "lr (--lr) must be a finite number > 0"),
                                          (["--seeds", "0,1", "--layer", "bilinear"], "not 'bilinear'")])
def test_bad_batched_flags_exit_2_in_one_line(extra, needle, capsys):
    from lrnnkit.cli import main
    assert main(TINY + extra) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("kind", ["diagonal", "fixed-point", "fixed-point-authors"])
def test_runs_match_each_run_alone_on_the_device_loop(kind):
    """R = 3 runs (the diagonal with its short convolution on; the fixed-point layer's training forward without
    host reads, each run stopping on its own) against each trained alone: float32 rounding grown by Adam over 6
    steps (atol 1e-4, as for one run), against a movement above 1e-3."""
    extra = dict(short_conv=True, layers=1) if kind == "diagonal" else {}
    d = difference_from_separate(_cfgs(kind, 3, **extra))
    assert max(d["max_abs"]) <= 1e-4 and min(d["moved"]) > 1e-3, d


@pytest.mark.skipif(not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1",
                    reason="the Triton kernels and CUDA graphs need a GPU: TRITON_INTERPRET=0 pytest ... (conftest.py "
                           "defaults to the interpreter)")
@pytest.mark.parametrize("kind", ["deltaproduct", "diagonal", "fixed-point", "fixed-point-authors"])
def test_on_cuda_the_captured_batched_step_trains_each_run(kind):
    """On CUDA (Triton chunk kernel, Triton short convolution, the step captured as one graph; bf16 off): R = 3
    runs batched against each alone on the device loop, 12 steps, the same tolerance as on the CPU (1e-4 absolute:
    float32 kernels in another order, grown by Adam). On a GPU machine:
    ``TRITON_INTERPRET=0 python3 -m pytest proofs_tests/learn/test_batched.py -k cuda``."""
    extra = {} if kind.startswith("fixed-point") else dict(short_conv=True)   # 003, App. D.3.1: no short conv
    d = difference_from_separate(_cfgs(kind, 3, device="cuda", bf16=False, steps=12, **extra))
    assert d["graph"] == "captured", d
    assert max(d["max_abs"]) <= 1e-4 and min(d["moved"]) > 1e-3, d


def test_the_triton_paths_take_the_folded_run_axis(monkeypatch):
    """The kernels the batched model calls on CUDA -- the chunked GH kernel, the Triton short convolution with each
    run's taps on its own rows, the batched scale-safe RMSNorm with each run's weight, the Triton l2norm and gated
    RMSNorm -- run here under the Triton interpreter on the folded (R B) layout, against the separate models on the
    torch paths: losses and gradients agree to 1e-6 (float32, two implementations of the same equations; measured 6e-8
    against gradients of ~0.3)."""
    import lrnnkit.ops.gh.api as api
    import lrnnkit.ops.l2norm as l2
    import lrnnkit.ops.norm as norm
    import lrnnkit.ops.short_conv as sc
    import lrnnkit.learn.batched as bt
    if os.environ.get("TRITON_INTERPRET") != "1" and not torch.cuda.is_available():
        pytest.skip("the Triton kernels need a GPU or TRITON_INTERPRET=1")
    chunk, l2n, rms = api.chunk_gh, l2.l2norm, norm.rms_norm
    monkeypatch.setattr(api, "chunk_gh", lambda *a, **k: chunk(*a, **{**k, "backend": "chunk"}))
    monkeypatch.setattr(l2, "l2norm", lambda x, eps=l2.EPS, backend="auto": l2n(x, eps, "triton"))
    monkeypatch.setattr(norm, "rms_norm", lambda x, w, eps, gate=None, backend="auto": rms(x, w, eps, gate,
                                                                                            backend="triton"))
    monkeypatch.setattr(sc, "causal_conv_runs_torch", sc.causal_conv_runs)  # _conv's CPU choice becomes Triton
    monkeypatch.setattr(bt, "rms_norm_runs_torch", norm.rms_norm_runs)        # and _rms's
    models = []
    for r in range(2):
        torch.manual_seed(r)
        models.append(SequenceModel(vocab=3, n_out=2, layer="deltaproduct", n_h=2, width=16, heads=2, gate=True,
                                    short_conv=True))
    bm = bt.BatchedSequenceModel(models)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 3, (2, 1, 18), generator=g), torch.randint(0, 2, (2, 1, 18), generator=g)
    losses = run_losses(bm(x), y)
    (grad,) = torch.autograd.grad(losses.sum(), bm.flat)
    monkeypatch.undo()                                       # the separate models on the torch paths
    for r, m in enumerate(models):
        loss = torch.nn.functional.cross_entropy(m(x[r]).reshape(-1, 2), y[r].reshape(-1))
        ps = list(m.parameters())
        gs = torch.autograd.grad(loss, ps, allow_unused=True)
        ref = torch.cat([(torch.zeros_like(p) if t is None else t).reshape(-1) for p, t in zip(ps, gs)])
        assert abs(float(losses[r].detach()) - float(loss.detach())) <= 1e-6
        assert torch.allclose(grad[r], ref, atol=1e-6, rtol=0) and float(ref.abs().max()) > 0.01


def test_each_run_reads_its_own_seeds_fixed_set(tmp_path):
    """``train_words``: run r's batch at step s is the single-run fixed set of seed r at step s (the words and
    epoch orders of its own seed; 20 words in batches of 6, steps 0-7 crossing epochs), the runs' batches differ,
    and a batched run stopped at step 4 and resumed ends as the uninterrupted one (bit for bit on the CPU)."""
    from lrnnkit.learn.dataset import FixedSet
    cfgs = _cfgs("diagonal", 3, train_words=20)
    task, bm = build_batched(cfgs)
    step = BatchedStep(cfgs, task, bm, torch.device("cpu"))
    alone = [FixedSet(task, 20, c.batch, c.train_len, [c.seed], "cpu") for c in cfgs]
    for s in range(8):
        step.fixed.prepare(s)
        x, y = step.batch(torch.tensor(s))
        for r in range(3):
            xr, yr = alone[r].batch_at(s)
            assert torch.equal(x[r], xr) and torch.equal(y[r], yr)
        assert not torch.equal(x[0], x[1]) and not torch.equal(x[1], x[2])
    cfgs = [dataclasses.replace(c, steps=8) for c in _cfgs("diagonal", 2, train_words=20)]
    a = [str(tmp_path / f"a{r}") for r in range(2)]
    b = [str(tmp_path / f"b{r}") for r in range(2)]
    whole = train_batched(cfgs, a, evaluate_at_end=False)
    train_batched(cfgs, b, evaluate_at_end=False, stop_at=4)
    second = train_batched(cfgs, b, evaluate_at_end=False)
    for w, s in zip(whole, second):
        assert all(torch.equal(p, q) for p, q in zip(w["_model"].parameters(), s["_model"].parameters()))


@pytest.mark.parametrize("edited", [3, 1, 0], ids=["every run", "one run", "none"])
def test_a_batched_resume_from_other_code_warns_once(tmp_path, capsys, edited):
    """Checkpoints written by other code (another source hash and commit): a batched run resumed from them warns
    once, one line naming how many of its runs and the code that wrote them, not once per run; one run alone is
    named by its directory; checkpoints of this code warn nothing."""
    cfgs = [dataclasses.replace(c, steps=4) for c in _cfgs("diagonal", 3)]
    outs = [str(tmp_path / f"r{r}") for r in range(3)]
    train_batched(cfgs, outs, evaluate_at_end=False, stop_at=2)
    for o in outs[:edited]:
        p = os.path.join(o, "checkpoint.json")
        doc = json.load(open(p))
        doc["code"].update(source="0" * 16, commit="f" * 40, dirty=False)
        with open(p, "w") as fh:
            json.dump(doc, fh)
    capsys.readouterr()
    train_batched(cfgs, outs, evaluate_at_end=False)
    lines = [x for x in capsys.readouterr().err.splitlines() if "bit for bit" in x]
    assert len(lines) == (1 if edited else 0), lines
    if edited == 3:
        assert lines[0].startswith(f"lrnnkit: warning: the checkpoints of all 3 runs ({outs[0]!r}, ...) were "
                                   "written by lrnnkit ") and "commit ffffffffffff" in lines[0]
    elif edited == 1:
        assert lines[0].startswith(f"lrnnkit: warning: the checkpoints of {outs[0]!r} were written by ")


def test_profile_step_reads_a_protocol_jobs_step(tmp_path, capsys):
    """benchmarks/profile_step.py --smoke: one protocol job's batched step profiled on the CPU (its operators by
    time, shares summing to 1, written atomically as JSON); a label the experiment does not have exits 2 with one
    line naming it and writes nothing."""
    from benchmarks import profile_step
    job = "004-bilinear=diagonal [0,1], parity"
    assert profile_step.main(["--smoke", "--steps", "1", "--jobs", job, "--out", str(tmp_path)]) == 0
    doc = json.load(open(tmp_path / "profile_step.json"))
    res = doc["jobs"]["004-bilinear / diagonal [0,1], parity"]
    assert res["runs"] == 12 and res["kernels"] and res["device_ms_per_step"] > 0
    assert abs(sum(r["share"] for r in res["kernels"]) - 1.0) < 1e-9
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    # --shapes: the operators keyed by name and input shapes (the batched runs' leading axis of 12 among them)
    assert profile_step.main(["--smoke", "--steps", "1", "--shapes", "--jobs", job, "--out", str(tmp_path)]) == 0
    res = json.load(open(tmp_path / "profile_step.json"))["jobs"]["004-bilinear / diagonal [0,1], parity"]
    assert all(r["name"].startswith("aten::") and " [" in r["name"] for r in res["kernels"])
    assert any("[12, " in r["name"] for r in res["kernels"])
    out = tmp_path / "bad"
    assert profile_step.main(["--smoke", "--jobs", "004-bilinear=no such label", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'no such label'" in err[0] and not out.exists()


def test_bench_scans_merges_a_scans_step_times_into_the_cost_table(tmp_path):
    """benchmarks/bench_scans.py --merge: a measured scan's alone and batched step times replace the cost table's
    rows of the same experiment and label (the former values kept under ``before``); a row of another label and
    a cell that was not measured leave the table as it was."""
    from benchmarks import bench_scans
    scans = {"measured_utc": "t", "rows": [
        {"experiment": "e", "label": "a", "runs": 12, "fused gate / alone": {"ms_per_step": 1.5},
         "fused gate / batched": {"ms_per_step": 10.0}},
        {"experiment": "e", "label": "b", "runs": 3, "fused gate / alone": {"error": "skipped (budget)"},
         "fused gate / batched": {"error": "skipped (budget)"}}]}
    cost = {"experiments": {"e": {"rows": [
        {"label": "a", "ms_per_step": 2.0, "batched": {"runs": 12, "ms_per_step": 16.0}, "source": "old"},
        {"label": "b", "ms_per_step": 0.9, "batched": {"runs": 3, "ms_per_step": 2.3}},
        {"label": "c", "ms_per_step": 4.0}]}}}
    sp, cp = tmp_path / "scans.json", tmp_path / "cost.json"
    sp.write_text(json.dumps(scans))
    cp.write_text(json.dumps(cost))
    assert bench_scans.main(["--merge", str(sp), str(cp), "--scans", "fused gate"]) == 0
    rows = {r["label"]: r for r in json.loads(cp.read_text())["experiments"]["e"]["rows"]}
    assert rows["a"]["ms_per_step"] == 1.5 and rows["a"]["batched"] == {"runs": 12, "ms_per_step": 10.0}
    assert rows["a"]["before"] == {"ms_per_step": 2.0, "batched": {"runs": 12, "ms_per_step": 16.0}, "source": "old"}
    assert rows["b"] == cost["experiments"]["e"]["rows"][1] and rows["c"] == {"label": "c", "ms_per_step": 4.0}
    # a scan timed batched only (the batched step's fused convolution and norm): the one-run time stays
    sp.write_text(json.dumps({"measured_utc": "t2", "rows": [
        {"experiment": "e", "label": "a", "runs": 12, "fused all / batched": {"ms_per_step": 7.0}}]}))
    assert bench_scans.main(["--merge", str(sp), str(cp), "--scans", "fused all"]) == 0
    a = {r["label"]: r for r in json.loads(cp.read_text())["experiments"]["e"]["rows"]}["a"]
    assert a["ms_per_step"] == 1.5 and a["batched"] == {"runs": 12, "ms_per_step": 7.0}
    assert a["before"]["batched"] == {"runs": 12, "ms_per_step": 10.0} and "fused all" in a["source"]
    # a measured group the table has no row for gets one, with its shape (a fixed-point job priced by its own step)
    sp.write_text(json.dumps({"measured_utc": "t3", "rows": [
        {"experiment": "e", "label": "d", "runs": 3, "layer": "fixed-point", "batch": 128, "width": 512, "layers": 1,
         "train_len": [16, 16], "triton scan / alone": {"ms_per_step": 6.2, "graph": "captured"},
         "triton scan / batched": {"ms_per_step": 15.8, "graph": "captured"}},
        {"experiment": "f", "label": "x", "runs": 3, "layer": "fixed-point", "batch": 1, "width": 1, "layers": 1,
         "train_len": [1, 1], "triton scan / batched": {"ms_per_step": 1.0}}]}))
    assert bench_scans.main(["--merge", str(sp), str(cp), "--scans", "triton scan"]) == 0
    doc = json.loads(cp.read_text())["experiments"]
    d = {r["label"]: r for r in doc["e"]["rows"]}["d"]
    assert d["batched"] == {"runs": 3, "ms_per_step": 15.8} and d["ms_per_step"] == 6.2
    assert d["train_len"] == [16, 16] and d["width"] == 512 and "new row" in d["source"]
    assert "f" not in doc       # batched only and no row: nothing to price one run by, and no empty entry
    # a group of one run timed batched only: that step is the run's own, so it gets a row too
    sp.write_text(json.dumps({"measured_utc": "t4", "rows": [
        {"experiment": "g", "label": "y", "runs": 1, "layer": "fixed-point", "batch": 256, "width": 256, "layers": 2,
         "train_len": [3, 40], "fused all / batched": {"ms_per_step": 103.0, "graph": "captured"}}]}))
    assert bench_scans.main(["--merge", str(sp), str(cp), "--scans", "fused all"]) == 0
    y = json.loads(cp.read_text())["experiments"]["g"]["rows"][0]
    assert y["ms_per_step"] == 103.0 and y["batched"] == {"runs": 1, "ms_per_step": 103.0} and y["layers"] == 2


@pytest.mark.parametrize("switch", ["gate", "norm", "selective"])
def test_fused_gate_seeds_pairs_the_two_arms_of_each_seed(tmp_path, switch):
    """benchmarks/fused_gate_seeds.py --smoke on the CPU (both arms the torch reference there): every seed's two
    numbers are equal, so the paired test says p = 1; the JSON is written and names the switch, which is put back
    after (``selective`` trains the Mamba block); an unknown range exits 2."""
    from benchmarks import fused_gate_seeds
    from benchmarks._switches import state
    before = state()
    out = tmp_path / "seeds.json"
    assert fused_gate_seeds.main(["--smoke", "--seeds", "2", "--ranges", "[0,1]", "--switch", switch,
                                  "--json", str(out)]) == 0
    assert state() == before
    case = json.loads(out.read_text())["cases"][0]
    assert case["eig_range"] == "[0,1]" and case["switch"] == switch and len(case["metrics"]) == 2
    for m in case["metrics"].values():
        assert m["off"] == m["on"] and len(m["off"]) == 2 and m["wilcoxon_p"] == 1.0
    assert fused_gate_seeds.paired([0.5, 0.6, 0.7, 0.8, 0.9, 0.4], [0.1, 0.2, 0.3, 0.35, 0.45, 0.05]) < 0.05
    with pytest.raises(SystemExit) as e:
        fused_gate_seeds.main(["--smoke", "--ranges", "[0,2]"])
    assert e.value.code == 2


def test_a_run_of_a_batched_job_resumes_in_a_part_of_its_own(tmp_path, monkeypatch):
    """protocol_grid.split_batched's promise: runs checkpointed together in one batched job resume as a batched job
    of one run (another call, another card), from the step they reached, and end where the whole batch would have
    ended."""
    from lrnnkit.learn import batched
    resumed = []
    real = batched._resume
    monkeypatch.setattr(batched, "_resume", lambda *a: resumed.append(real(*a)) or resumed[-1])
    base = TrainConfig(task="parity", layer="diagonal", width=16, heads=2, layers=1, steps=6, batch=8, lr=1e-2,
                       train_len=(3, 10), test_len=(10,), eval_n=8, short_conv=False, checkpoint_every=2)
    cfgs = [dataclasses.replace(base, seed=s) for s in (0, 1)]
    outs = [str(tmp_path / f"r{s}") for s in (0, 1)]
    train_batched(cfgs, outs, stop_at=4, evaluate_at_end=False)
    part = train_batched(cfgs[1:], outs[1:])[0]
    whole = train_batched(cfgs)[1]
    assert [r and r["step"] for r in resumed] == [None, 4]         # the part went on from step 4
    assert part["steps"] == 6 and part["test_accuracy"] == whole["test_accuracy"]
    assert part["final_accuracy"] == whole["final_accuracy"]


def test_the_batched_convolution_on_cuda_is_either_layout(monkeypatch, tmp_path):
    """batched._conv on CUDA inputs (here: the interpreter, the CPU tensors passed for CUDA ones): the in-place
    kernels (CONV_IN_PLACE_ON_CUDA) and the side-by-side layout give the torch reference's values and gradients
    (float32 kernels, float32 reference: relative 1e-5); profile_step --conv and --norm choose and put the settings
    back."""
    from benchmarks import profile_step
    from lrnnkit.learn import batched
    from lrnnkit.ops.short_conv import causal_conv_runs_torch
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("runs the kernels on CPU tensors in the interpreter")

    class Cuda(torch.Tensor):      # is_cuda True for _conv's choice; the kernels see the CPU data
        @property
        def is_cuda(self):
            return True
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(3, 2, 7, 5, generator=g), torch.randn(3, 5, 1, 4, generator=g)
    xr, wr = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    y0 = causal_conv_runs_torch(xr, wr)
    g0 = torch.autograd.grad(y0.square().sum(), (xr, wr))
    for in_place in (True, False):
        monkeypatch.setattr(batched, "CONV_IN_PLACE_ON_CUDA", in_place)
        xk, wk = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        y = batched._conv(xk.as_subclass(Cuda), wk)
        gk = torch.autograd.grad(y.square().sum(), (xk, wk))
        for a, b in [(y, y0)] + list(zip(gk, g0)):
            assert float((a.detach() - b.detach()).norm() / b.detach().norm()) <= 1e-5
    monkeypatch.undo()
    was = batched.CONV_IN_PLACE_ON_CUDA, batched.RMS_FUSED_ON_CUDA
    conv, norm = "in-place" if not was[0] else "side-by-side", "fused" if not was[1] else "torch"
    assert profile_step.main(["--smoke", "--steps", "1", "--jobs", "004-bilinear=diagonal [0,1], parity", "--conv",
                              conv, "--norm", norm, "--out", str(tmp_path)]) == 0
    doc = json.load(open(tmp_path / "profile_step.json"))
    assert (doc["conv"], doc["norm"]) == (conv, norm)
    assert (batched.CONV_IN_PLACE_ON_CUDA, batched.RMS_FUSED_ON_CUDA) == was


def test_benchmark_switches_set_the_fused_paths_and_put_them_back():
    """benchmarks._switches.switched: the named fused paths take the given settings inside (None leaves one as it
    is) and all are as before after, an exception inside included; an unknown name is refused."""
    from benchmarks._switches import state, switched
    before = state()
    with pytest.raises(RuntimeError):
        with switched(gate=not before["gate"], norm=not before["norm"], conv=None):
            assert state() == {**before, "gate": not before["gate"], "norm": not before["norm"]}
            raise RuntimeError("inside")
    assert state() == before
    with pytest.raises(ValueError, match="unknown fused path"):
        with switched(scan=True):
            pass
