"""The two training loops (lrnnkit.learn.step): the device loop computes the papers' step as the host loop does --
the same schedule, the same skip of a non-finite update, checkpoints that resume bit for bit -- and learns the same
(parity at tiny scale, several seeds). CPU; the CUDA graph capture is checked on a GPU only."""
import dataclasses
import math
import json
import os

import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.learn.step import DeviceStep, HostStep, lr_at, lr_schedule
from lrnnkit.learn.train import TrainConfig, build, load_checkpoint, train


def _parity(seed: int, loop: str) -> TrainConfig:
    """000-parity at tiny scale (the host loop's own parity test, proofs_tests/learn/test_train.py)."""
    return TrainConfig(task="parity", layer="diagonal", eig_range=(-1, 1), width=16, heads=2, steps=150, batch=32,
                       lr=1e-2, train_len=(3, 40), test_len=(40, 256), eval_n=128, short_conv=False, seed=seed,
                       loop=loop)


def test_loop_resolves_and_is_checked():
    assert TrainConfig().step_loop == "host"                              # auto on the CPU
    assert TrainConfig(device="cuda").step_loop == "device"               # ... and on a GPU,
    assert dataclasses.replace(TrainConfig(), device="cuda").step_loop == "device"   # also for a moved config
    assert TrainConfig(device="cuda", layer="fixed-point").step_loop == "device"     # sync-free in training
    assert TrainConfig(loop="device").loop == "device"
    assert TrainConfig.from_json({"task": "parity"}).loop == "host"       # stored before the device loop existed
    assert TrainConfig.from_json(TrainConfig(loop="device").to_json()).loop == "device"
    with pytest.raises(InputError, match="loop"):
        TrainConfig(loop="gpu")


def test_schedule_table_is_lr_at():
    cfg = TrainConfig(steps=100, lr=1e-3, warmup=0.1, min_lr=1e-6)
    tab = lr_schedule(cfg, 120)
    assert [float(v) for v in tab[:100]] == [lr_at(cfg, s) for s in range(100)]
    assert all(float(v) == lr_at(cfg, 99) for v in tab[100:])             # past the end: the last value


SEEDS = range(10)


def test_device_loop_learns_parity_as_the_host_loop_does():
    """000, Fig. 1 at tiny scale, ten seeds on each loop: the batches differ (other random numbers, the same
    distribution), the outcome does not. Per seed the accuracy at length 256 is spread wide at this scale (0.49-1.00
    on either loop; over seeds 0-19 the means were 0.870 host and 0.873 device, a per-seed SD of about 0.17), so the
    loops are compared by their ten-seed means: each >= 0.8 (a loop whose labels or data were wrong would sit near
    chance, 0.5) and apart by at most 0.12 (about 1.6 standard errors of the difference; seeds 0-9 measured 0.924
    host, 0.880 device)."""
    torch.set_num_threads(1)
    acc = {}
    for loop in ("host", "device"):
        runs = [train(_parity(seed, loop)) for seed in SEEDS]
        assert all(r["config"]["loop"] == loop and r["steps"] == 150 for r in runs)
        assert {r["step_graph"] for r in runs} == ({None} if loop == "host" else {"eager (cpu)"})
        acc[loop] = sum(r["final_accuracy"]["256"] for r in runs) / len(runs)
    assert min(acc.values()) >= 0.8, acc
    assert abs(acc["host"] - acc["device"]) <= 0.12, acc


def _one_step(stepper_cls, poison: bool):
    cfg = TrainConfig(task="group:S3", layer="deltaproduct", n_h=2, width=16, heads=2, steps=10, batch=4,
                      train_len=(3, 6), test_len=(6,), loop="device" if stepper_cls is DeviceStep else "host")
    task, model, opt = build(cfg)
    device = torch.device("cpu")
    st = stepper_cls(cfg, task, model, opt, device)
    st.run(0)                                                    # one good step: moments exist
    st.updating = False
    before = {k: v.clone() for k, v in model.state_dict().items()}
    moments = {id(p): {k: v.clone() for k, v in opt.state[p].items()} for p in model.parameters()}
    hooks = []
    if poison:
        p0 = next(model.parameters())
        hooks.append(p0.register_hook(lambda g: g * float("nan")))
    st.run(1)
    for h in hooks:
        h.remove()
    same = all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    same_moments = all(torch.equal(v, opt.state[p][k]) for p in model.parameters() for k, v in moments[id(p)].items())
    return st, same, same_moments


@pytest.mark.parametrize("stepper_cls", [HostStep, DeviceStep])
def test_a_non_finite_gradient_skips_the_whole_update(stepper_cls):
    """The host loop reads the norm and skips; the device loop hands found_inf to the fused AdamW kernel: either
    way parameters, both moments and the step count stay as they were, and the skip is counted."""
    st, same, same_moments = _one_step(stepper_cls, poison=True)
    assert same and same_moments and st.nonfinite == 1
    st, same, same_moments = _one_step(stepper_cls, poison=False)
    assert not same and not same_moments and st.nonfinite == 0


def test_device_loop_resume_is_bit_identical(tmp_path):
    """Stop at step 7, resume in a fresh call: the device loop's tensors, schedule and metrics equal an
    uninterrupted run's (its batch of step s depends on (seed, s) only)."""
    torch.set_num_threads(1)
    cfg = dict(task="group:S3", layer="deltaproduct", n_h=2, width=16, heads=2, mlp=True, steps=16, batch=8,
               lr=3e-3, train_len=(3, 8), test_len=(8,), eval_n=8, log_every=1, loop="device")
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    train(TrainConfig(**cfg), a, evaluate_at_end=False)
    assert train(TrainConfig(**cfg), b, stop_at=7, evaluate_at_end=False)["steps"] == 7
    assert train(TrainConfig(**cfg), b, evaluate_at_end=False)["steps"] == 16
    da, _ = load_checkpoint(a)
    db, _ = load_checkpoint(b)
    for k, v in da["_tensors"].items():
        assert torch.equal(v, db["_tensors"][k]), k
    assert da["param_groups"] == db["param_groups"]
    strip = lambda p: [{k: v for k, v in json.loads(l).items() if k != "seconds"} for l in open(p)]  # noqa: E731
    assert strip(os.path.join(a, "metrics.jsonl")) == strip(os.path.join(b, "metrics.jsonl"))
    # a checkpoint of the other loop is another run: refused, naming the loop
    with pytest.raises(InputError, match="loop"):
        train(TrainConfig(**{**cfg, "loop": "host"}), b, evaluate_at_end=False)


@pytest.mark.skipif(not torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1",
                    reason="CUDA graphs need a GPU and compiled kernels: TRITON_INTERPRET=0 pytest ... (conftest.py "
                           "defaults to the interpreter)")
@pytest.mark.parametrize("train_words", [None, 40])
@pytest.mark.parametrize("layer", [dict(layer="deltaproduct"),
                                   dict(layer="fixed-point", block_size=2, eig_range=(-1, 1), short_conv=False)])
def test_the_step_is_captured_and_replays_the_eager_step(train_words, layer):
    """On CUDA the device loop captures its step after its eager warm-up; a captured run and an eager one (capture
    disabled) end with the same parameters (same kernels, same order: equal up to the GPU's own nondeterminism,
    here compared to 1e-5 relative, bf16 autocast off). With a fixed set of 40 words (12 steps of 16: 4.8 epochs)
    the captured graph reads the epoch orders the host refills between replays, as the eager steps do. The
    fixed-point layer (003) is captured too: its training forward decides the stopping rule on the device. On a GPU
    machine: ``TRITON_INTERPRET=0 python3 -m pytest proofs_tests/learn/test_step.py -k captured``."""
    cfg = TrainConfig(task="group:S3", **layer, n_h=2, width=32, heads=2, steps=12, batch=16,
                      train_len=(8, 16), test_len=(16,), device="cuda", bf16=False, loop="device",
                      train_words=train_words)
    r = train(cfg, evaluate_at_end=False)
    assert r["step_graph"] == "captured"
    ref_model = r["_model"]
    import lrnnkit.learn.step as step_mod
    old = step_mod.DeviceStep._capture
    step_mod.DeviceStep._capture = lambda self: setattr(self, "graph", "eager (disabled)")
    try:
        e = train(cfg, evaluate_at_end=False)
    finally:
        step_mod.DeviceStep._capture = old
    for (k, v), w in zip(ref_model.state_dict().items(), e["_model"].state_dict().values()):
        assert torch.allclose(v, w, rtol=1e-5, atol=1e-6), k


def test_a_checkpoint_resumes_only_on_the_loop_it_trained_on(tmp_path):
    """``loop="auto"`` is decided when a run starts; a checkpoint records the loop it trained on, and a resume that
    would take the other one (a GPU run resumed on a CPU, say) is refused, naming the flag that resumes it."""
    cfg = dict(task="parity", layer="diagonal", steps=4, batch=4, width=8, heads=1, train_len=(2, 4), test_len=(4,))
    out = str(tmp_path / "r")
    train(TrainConfig(**cfg), out, stop_at=2, evaluate_at_end=False)
    path = os.path.join(out, "checkpoint.json")
    doc = json.load(open(path))
    assert doc["progress"]["loop"] == "host"
    doc["progress"]["loop"] = "device"                      # as if it had trained on a GPU
    with open(path, "w") as fh:
        json.dump(doc, fh)
    with pytest.raises(InputError, match="--loop device"):
        train(TrainConfig(**cfg), out, evaluate_at_end=False)

    assert train(TrainConfig(**cfg, loop="device"), out, evaluate_at_end=False)["steps"] == 4


def test_both_loops_read_the_same_fixed_set_at_the_same_step():
    """``train_words``: the host loop and the device loop (eager on the CPU) feed the model the same words at every
    step (recorded by a forward pre-hook), across the epoch boundaries of 40 words in batches of 16 (positions
    32..47 of step 2 span epochs 0 and 1), and those words are the fixed set's (:mod:`lrnnkit.learn.dataset`)."""
    from lrnnkit.learn.dataset import FixedSet
    seen = {}
    for loop in ("host", "device"):
        cfg = dataclasses.replace(_parity(3, loop), steps=7, batch=16, train_words=40, train_len=(3, 9))
        task, model, opt = build(cfg)
        got = seen[loop] = []
        model.register_forward_pre_hook(lambda m, args: got.append(args[0].clone()))
        step = (HostStep(cfg, task, model, opt, torch.device("cpu")) if loop == "host" else
                DeviceStep(cfg, task, model, opt, torch.device("cpu")))
        for s in range(cfg.steps):
            step.run(s)
    assert len(seen["host"]) == len(seen["device"]) == 7
    ref = FixedSet(task, 40, 16, (3, 9), [3], "cpu")
    for s, (a, b) in enumerate(zip(seen["host"], seen["device"])):
        assert torch.equal(a, b)
        assert torch.equal(a, ref.batch_at(s)[0])
    words = {tuple(r) for x in seen["host"] for r in x.tolist()}
    assert len(words) <= 40                               # 112 rows read, from a set of 40 words


def test_linear_decay_in_exact_arithmetic():
    """003, App. E.2's 'linear learning rate decay after a warmup': lr (s + 1) / w during the warm-up, then
    lr + (min_lr - lr) (s - w) / (steps - w). With lr = 1, min_lr = 0, w = 256 and steps - w = 1024 every value is
    a dyadic rational that float64 holds exactly, so the comparison is exact (==, no tolerance)."""
    from fractions import Fraction
    cfg = TrainConfig(steps=1280, lr=1.0, min_lr=0.0, warmup=0.2, schedule="linear")
    assert int(cfg.warmup * cfg.steps) == 256
    for s in (0, 1, 127, 255, 256, 257, 512, 768, 1000, 1279, 1280, 5000):
        want = Fraction(s + 1, 256) if s < 256 else 1 - min(Fraction(1), Fraction(s - 256, 1024))
        assert Fraction(lr_at(cfg, s)) == want, s
    # 003-copy's printed setting: 300 warm-up iterations of 10,000, then a straight line from 1e-5 to min_lr;
    # floats here, compared within 4 ulps of the rational value (the formula rounds at most 3 times)
    cfg = TrainConfig(steps=10_000, lr=1e-5, min_lr=1e-6, warmup=0.03, schedule="linear")
    for s, frac in ((299, Fraction(1)), (300, Fraction(1)), (5150, Fraction(1, 2)), (9999, Fraction(1, 9700))):
        lr, lo = Fraction(1e-5), Fraction(1e-6)
        want = lr if s < 300 else lo + (lr - lo) * frac
        assert abs(Fraction(lr_at(cfg, s)) - want) <= 4 * Fraction(1e-5) * Fraction(2) ** -52, s


def test_constant_schedule_is_the_old_convention_and_cosine_is_the_default():
    """``schedule="constant"`` is lr at every step, as warmup 0 with min_lr = lr was; a stored config without the
    field reads as cosine, so its learning rates are what they were."""
    base = dict(steps=200, lr=3e-3, min_lr=3e-3, warmup=0.0)
    old = TrainConfig(**base)
    new = TrainConfig(**{**base, "min_lr": 1e-6}, schedule="constant")
    assert [lr_at(new, s) for s in range(200)] == [lr_at(old, s) for s in range(200)] == [3e-3] * 200
    stored = {k: v for k, v in TrainConfig(steps=200, lr=1e-3).to_json().items() if k != "schedule"}
    cfg = TrainConfig.from_json(stored)
    assert cfg.schedule == "cosine" and cfg.test_mix is None
    # step 65: a quarter of the way through the decay, where cosine and a straight line differ
    assert lr_at(cfg, 65) == 1e-6 + 0.5 * (1e-3 - 1e-6) * (1 + math.cos(math.pi * (45 / 180)))
    with pytest.raises(InputError, match="schedule"):
        TrainConfig(schedule="step")


@pytest.mark.parametrize("schedule", ["cosine", "linear", "constant"])
def test_host_and_device_loops_use_the_same_schedule(schedule):
    """Both loops train a few steps of one config: the rate each set on its optimizer at every step equals
    lr_at's (the device loop reads it from its precomputed float32 table: equal to float32 rounding, relative
    2^-24)."""
    torch.set_num_threads(1)
    got = {}
    for cls in (HostStep, DeviceStep):
        cfg = TrainConfig(task="parity", layer="diagonal", width=8, heads=1, steps=12, batch=4, lr=1e-2,
                          min_lr=1e-3, warmup=0.25, train_len=(3, 6), test_len=(6,), schedule=schedule,
                          loop="device" if cls is DeviceStep else "host")
        task, model, opt = build(cfg)
        st = cls(cfg, task, model, opt, torch.device("cpu"))
        got[cls] = []
        for s in range(cfg.steps):
            st.run(s)
            st.updating = False
            got[cls].append(st.read()[2])
        want = [lr_at(cfg, s) for s in range(cfg.steps)]
    assert got[HostStep] == want
    assert all(abs(d - w) <= w * 2 ** -24 for d, w in zip(got[DeviceStep], want)), (got[DeviceStep], want)
    assert len(set(want)) > (1 if schedule == "constant" else 6)      # warm-up, then the decay (or the plateau)


def test_fixed_point_layers_follow_the_loop(monkeypatch):
    """The fixed-point layer takes the device loop where its training forward can be sync-free
    (FixedPointMixer.SYNC_FREE); built for the device loop its layers decide the stopping rule on the device, for
    the host loop on the host (early exit). With SYNC_FREE off, "auto" keeps it on the host loop and no layer is
    sync-free even on a forced device loop."""
    from lrnnkit.layers.fixed_point import FixedPointMixer
    cfg = TrainConfig(device="cuda", layer="fixed-point")
    for loop, want in (("host", False), ("device", True)):
        _, model, _ = build(_fixed_point_cfg(loop))
        assert [m.layer.sync_free for m in model.mixers] == [want]
    monkeypatch.setattr(FixedPointMixer, "SYNC_FREE", False)
    assert cfg.step_loop == "host"
    _, model, _ = build(_fixed_point_cfg("device"))
    assert [m.layer.sync_free for m in model.mixers] == [False]


def _fixed_point_cfg(loop: str) -> TrainConfig:
    """003's A5 task at tiny scale on one fixed set of equal-length words (the loops then feed the same batches,
    unpadded: test_both_loops_read_the_same_fixed_set_at_the_same_step)."""
    return TrainConfig(task="group:A5", layer="fixed-point", n_h=2, block_size=2, eig_range=(-1, 1), width=8,
                       heads=2, steps=5, batch=4, lr=3e-3, train_len=(6, 6), test_len=(6,), train_words=12,
                       short_conv=False, seed=2, loop=loop)


def test_device_loop_trains_the_fixed_point_layer_as_the_host_loop_does():
    """Five steps of the fixed-point layer on each loop (CPU: the device loop's step is eager), the same words: the
    device loop's training forward runs the sync-free iteration (the iterate frozen on a device flag), the host
    loop's the early exit; the iteration counts agree at every step and the parameters end equal to 1e-5 relative
    (float32; what differs between the loops is only the AdamW implementation, fused vs. for-each, and the
    clipping's reduction order: rounding, measured 6e-8 at most), and every parameter moved (by about 1e-2, far more
    than the tolerance). The iteration stops before the training cap of 16 in some steps (the freeze exercised;
    measured 6, 10, 16, 11, 5 iterations)."""
    torch.set_num_threads(1)
    out, its = {}, {}
    for loop in ("host", "device"):
        cfg = _fixed_point_cfg(loop)
        task, model, opt = build(cfg)
        start = {k: v.clone() for k, v in model.state_dict().items()}
        step = (HostStep(cfg, task, model, opt, torch.device("cpu")) if loop == "host" else
                DeviceStep(cfg, task, model, opt, torch.device("cpu")))
        layer = model.mixers[0].layer
        assert layer.sync_free == (loop == "device")
        its[loop] = []
        for s in range(cfg.steps):
            step.run(s)
            its[loop].append(layer.last_iterations)
        out[loop] = model.state_dict()
    assert all(isinstance(i, int) for i in its["host"]) and all(isinstance(i, torch.Tensor) for i in its["device"])
    assert [int(i) for i in its["device"]] == its["host"] and min(its["host"]) < 16
    for k, v in out["host"].items():
        w = out["device"][k]
        assert torch.allclose(v, w, rtol=1e-5, atol=1e-7), (k, float((v - w).abs().max()))
        assert not torch.allclose(v, start[k], rtol=1e-3, atol=1e-5), k
