"""Training, evaluation, checkpoints and the train / experiment CLI."""
import json
import os

import pytest
import torch

from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.learn.evaluate import scaled_accuracy
from lrnnkit.learn.experiments import EXPERIMENTS, list_experiments
from lrnnkit.learn.train import TrainConfig, load_checkpoint, lr_at, train


def _parity(eig, **kw):
    return TrainConfig(task="parity", layer="diagonal", eig_range=eig, width=16, heads=2, steps=150, batch=32, lr=1e-2,
                       train_len=(3, 40), test_len=(40, 256), eval_n=128, short_conv=False, **kw)


def test_parity_needs_negative_eigenvalues():
    """000, Fig. 1 / Theorem 1 at tiny scale: a diagonal LRNN with transitions in [-1, 1] learns parity from
    lengths 3-40 and is right at length 256; with [0, 1] it stays near chance (0.5) at length 256."""
    torch.set_num_threads(1)
    good = train(_parity((-1, 1)))
    bad = train(_parity((0, 1)))
    assert good["final_accuracy"]["256"] >= 0.99 and good["test_accuracy"]["256"] >= 0.99
    assert good["eigenvalues"]["min_real"] < -0.9          # it uses an eigenvalue near -1
    assert bad["final_accuracy"]["256"] <= 0.75 and bad["test_accuracy"]["256"] <= 0.75
    assert bad["eigenvalues"]["min_real"] >= 0 and bad["eigenvalues"]["fraction_negative"] == 0
    assert good["scaled_accuracy"]["256"] == pytest.approx(scaled_accuracy(good["final_accuracy"]["256"], 0.5))


def test_resume_is_bit_identical(tmp_path):
    """Stop at step 7, resume in a fresh call: parameters, optimizer moments and metrics equal an uninterrupted
    run's, bit for bit (DeltaProduct n_h = 2 with the short convolution and an MLP: every parameter kind)."""
    torch.set_num_threads(1)
    cfg = dict(task="group:S3", layer="deltaproduct", n_h=2, width=16, heads=2, mlp=True, steps=16, batch=8,
               lr=3e-3, train_len=(3, 8), test_len=(8,), eval_n=8, log_every=1)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    train(TrainConfig(**cfg), a, evaluate_at_end=False)
    part = train(TrainConfig(**cfg), b, stop_at=7, evaluate_at_end=False)
    assert part["steps"] == 7
    rest = train(TrainConfig(**cfg), b, evaluate_at_end=False)
    assert rest["steps"] == 16
    da, ma = load_checkpoint(a)
    db, mb = load_checkpoint(b)
    for k, v in da["_tensors"].items():
        assert torch.equal(v, db["_tensors"][k]), k
    assert da["param_groups"] == db["param_groups"] and da["rng"] == db["rng"]
    strip = lambda p: [{k: v for k, v in json.loads(l).items() if k != "seconds"} for l in open(p)]  # noqa: E731
    assert strip(os.path.join(a, "metrics.jsonl")) == strip(os.path.join(b, "metrics.jsonl"))
    # a checkpoint made with other settings is refused, naming them
    with pytest.raises(InputError, match="lr"):
        train(TrainConfig(**{**cfg, "lr": 1e-3}), b, evaluate_at_end=False)


def test_checkpoint_tensors_must_match_their_json(tmp_path):
    out = str(tmp_path / "c")
    train(TrainConfig(task="parity", layer="diagonal", steps=2, batch=4, width=8, heads=1, train_len=(2, 4),
                      test_len=(4,), eval_n=4), out, evaluate_at_end=False)
    name = json.load(open(os.path.join(out, "checkpoint.json")))["tensors"]
    with open(os.path.join(out, name), "r+b") as fh:
        fh.seek(-1, 2)
        last = fh.read(1)
        fh.seek(-1, 2)
        fh.write(bytes([last[0] ^ 1]))
    with pytest.raises(InputError, match="SHA-256"):
        load_checkpoint(out)


def test_cosine_schedule():
    cfg = TrainConfig(steps=100, lr=1e-3, warmup=0.1, min_lr=1e-6)
    assert lr_at(cfg, 0) == pytest.approx(1e-4) and lr_at(cfg, 9) == pytest.approx(1e-3)
    assert lr_at(cfg, 10) == pytest.approx(1e-3) and lr_at(cfg, 100) == pytest.approx(1e-6)
    assert all(lr_at(cfg, s) >= lr_at(cfg, s + 1) for s in range(10, 100))


def test_cli_train_json(tmp_path, capsys):
    out = str(tmp_path / "run")
    rc = main(["train", "parity", "--layer", "diagonal", "--steps", "5", "--batch", "4", "--width", "8",
               "--heads", "1", "--train-len", "2:6", "--test-len", "6,12", "--out", out, "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    for key in ("test_accuracy", "train_accuracy", "scaled_accuracy", "eigenvalues", "steps", "seconds", "checkpoint"):
        assert key in res
    assert set(res["test_accuracy"]) == {"6", "12"} and res["steps"] == 5
    assert set(res["eigenvalues"]) >= {"min_real", "fraction_negative"}
    assert os.path.exists(res["checkpoint"]) and os.path.exists(os.path.join(out, "result.json"))


def test_cli_reads_a_negative_eigenvalue_range():
    from lrnnkit.cli import build_parser
    for form in (["--eig-range", "-1,1"], ["--eig-range=-1,1"]):
        a = build_parser().parse_args(["train", "parity", "--layer", "diagonal", *form])
        assert a.eig_range == "-1,1"


@pytest.mark.parametrize("argv,needle", [
    (["train", "parity", "--layer", "diagonal", "--train-len", "9:3"], "--train-len"),
    (["train", "parity", "--layer", "diagonal", "--test-len", "a,b"], "--test-len"),
    (["train", "parity", "--layer", "diagonal", "--eig-range", "0,2"], "eigenvalue range"),
    (["train", "nosuch:3", "--layer", "diagonal"], "nosuch"),
    (["experiment", "nosuch"], "nosuch"),
    (["experiment"], "--list"),
])
def test_cli_bad_input_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in err[0]


def test_experiment_list(capsys):
    assert main(["experiment", "--list", "--json"]) == 0
    lst = json.loads(capsys.readouterr().out)
    assert lst == list_experiments() and len(lst) == len(EXPERIMENTS)
    for e in lst:
        assert set(e) == {"name", "paper", "figure_or_table", "claim"} and e["paper"] in {"000", "001", "002", "003", "004"}
    for e in EXPERIMENTS.values():       # every experiment defines runs at every scale
        for scale in ("tiny", "small", "paper"):
            assert e.runs(scale)


def test_nonfinite_gradients_skip_the_update_and_are_reported():
    """A diverged model (NaN in the embedding) never updates its parameters (the step is skipped and counted),
    and its eigenvalue summary says "not finite" instead of handing NaN to LAPACK (MKL aborts on it)."""
    from lrnnkit.learn.models import SequenceModel

    def nan_model(task):
        m = SequenceModel(task.n_in, task.n_out, layer="diagonal", width=8, heads=1)
        with torch.no_grad():
            m.embed.weight[0] = float("nan")
        return m
    cfg = TrainConfig(task="parity", layer="diagonal", steps=4, batch=4, width=8, heads=1, train_len=(4, 6),
                      test_len=(6,), eval_n=4)
    res = train(cfg, model_fn=nan_model)
    assert res["skipped_nonfinite_steps"] == 4
    assert res["eigenvalues"]["nonfinite"] is True and res["eigenvalues"]["min_real"] is None


@pytest.mark.parametrize("eig,learns", [("-1,1", True), ("0,1", False)])
def test_cli_defaults_learn_parity(eig, learns, capsys):
    """`lrnnkit train parity --layer diagonal --eig-range E --train-len 3:40 --test-len 256 --device cpu` with every
    other flag at its default: [-1, 1] is right at length 256 (the defaults are the layer's: lr 1e-2, 500 steps, no
    short convolution), [0, 1] stays at chance (000, Theorem 1 from the learning side). About 8 s each on one core."""
    torch.set_num_threads(1)
    rc = main(["train", "parity", "--layer", "diagonal", "--eig-range", eig, "--train-len", "3:40", "--test-len",
               "256", "--device", "cpu", "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["config"]["steps"] == 500 and res["config"]["lr"] == 1e-2 and res["config"]["short_conv"] is False
    if learns:
        assert res["test_accuracy"]["256"] >= 0.99
    else:
        assert res["test_accuracy"]["256"] <= 0.6


def _s3_cli(eig: str, capsys, *extra: str) -> dict:
    torch.set_num_threads(1)
    rc = main(["train", "group:S3", "--layer", "deltaproduct", "--n-h", "2", "--eig-range", eig, "--device", "cpu",
               "--json", *extra])
    assert rc == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("eig,learns", [("-1,1", True), ("0,1", False)])
def test_cli_defaults_learn_s3(eig, learns, capsys):
    """`lrnnkit train group:S3 --layer deltaproduct --n-h 2 --eig-range E --device cpu` with every other flag at its
    default (width 64, 8 heads of 8, batch 64, words of 3-40 letters, lr 1e-3, 1000 steps, no short convolution):
    [-1, 1] is right at length 128, three times the longest training word (0.99-1.0 for seeds 0-2; 0.83-0.99 at
    256), [0, 1] stays near chance, 1/6 (0.19) -- 001, Fig. 3's S3 panel, and 000, Theorem 1: with eigenvalues in
    [0, 1] no transition is a reflection, and a transposition is one. About 80 s each on one core."""
    res = _s3_cli(eig, capsys)
    c = res["config"]
    assert (c["steps"], c["lr"], c["short_conv"], c["width"], c["heads"]) == (1000, 1e-3, False, 64, 8)
    if learns:
        assert res["test_accuracy"]["128"] >= 0.95
    else:
        assert max(res["test_accuracy"]["128"], res["test_accuracy"]["256"]) <= 0.3


def test_cli_defaults_follow_the_layer():
    from lrnnkit.cli import build_parser
    from lrnnkit.learn.kinds import (LAYER_KINDS, default_heads, default_lr, default_short_conv, default_steps,
                                     train_defaults)
    assert (default_lr("diagonal"), default_steps("diagonal"), default_short_conv("diagonal")) == (1e-2, 500, False)
    for layer in ("deltanet", "deltaproduct"):     # fla's learning rate; no short convolution (S3, above)
        assert (default_lr(layer), default_steps(layer), default_short_conv(layer), default_heads(layer)) == (
            1e-3, 1000, False, 8)
    assert all(isinstance(default_lr(k), float) and default_heads(k) >= 1 for k in LAYER_KINDS)
    a = build_parser().parse_args(["train", "group:S3", "--layer", "deltaproduct"])
    d = train_defaults("deltaproduct")
    assert (a.width, a.batch, a.train_len, a.test_len) == (
        d["width"], d["batch"], "%d:%d" % d["train_len"], ",".join(map(str, d["test_len"])))
    tiny = EXPERIMENTS["001-deltaproduct"].runs("tiny")[0][1]     # `lrnnkit experiment` follows them
    assert {k: getattr(tiny, k) for k in d} == d


def test_python_config_takes_the_command_lines_defaults(monkeypatch):
    """``TrainConfig(task=..., layer=L)`` is the run `lrnnkit train ... --layer L` makes: heads, short convolution,
    lr and steps left out resolve to the layer's defaults (they were fixed at 4 heads, a short convolution, lr 1e-3
    and 1000 steps for every layer: for the diagonal layer not the settings that learn parity, test above); given
    ones are kept, and the resolved config round-trips through JSON unchanged."""
    import lrnnkit.learn.train as tr
    from lrnnkit.cli import build_parser
    from lrnnkit.cli.learn import run_train
    from lrnnkit.learn.kinds import LAYER_KINDS, train_defaults

    class Seen(Exception):
        pass

    def stop(cfg, *a, **k):
        raise Seen(cfg)
    monkeypatch.setattr(tr, "train", stop)
    for layer in LAYER_KINDS:
        cfg = TrainConfig(task="parity", layer=layer)
        assert {k: getattr(cfg, k) for k in train_defaults(layer)} == train_defaults(layer), layer
        assert TrainConfig.from_json(cfg.to_json()) == cfg
        with pytest.raises(Seen) as seen:
            run_train(build_parser().parse_args(["train", "parity", "--layer", layer]))
        assert seen.value.args[0] == cfg, layer
    mine = TrainConfig(task="parity", layer="diagonal", heads=3, short_conv=True, lr=5e-4, steps=7)
    assert (mine.heads, mine.short_conv, mine.lr, mine.steps) == (3, True, 5e-4, 7)
    with pytest.raises(InputError, match="heads"):
        TrainConfig(task="parity", layer="diagonal", heads=0)


def test_deterministic_is_on_during_the_run_and_restored_after(monkeypatch):
    """``deterministic=True`` turns torch's deterministic algorithms on for the run only (a sweep's serial driver
    goes on with its own setting), and a non-bool value is refused."""
    import lrnnkit.learn.train as tr
    seen = []
    real = tr._train
    monkeypatch.setattr(tr, "_train", lambda *a, **k: seen.append(torch.are_deterministic_algorithms_enabled())
                        or real(*a, **k))
    assert not torch.are_deterministic_algorithms_enabled()
    cfg = dict(task="parity", layer="diagonal", steps=2, batch=4, width=8, heads=1, train_len=(2, 4), test_len=(4,),
               eval_n=4)
    train(TrainConfig(**cfg, deterministic=True), evaluate_at_end=False)
    train(TrainConfig(**cfg), evaluate_at_end=False)
    assert seen == [True, False] and not torch.are_deterministic_algorithms_enabled()
    with pytest.raises(InputError, match="deterministic"):
        TrainConfig(**cfg, deterministic=1)


def test_test_mix_is_checked_and_stored():
    """``test_mix = (n, lo, hi)``: three integers, 1 <= lo <= hi, within the evaluation's limits; it survives JSON
    and a run with it stores the mixture's numbers beside the per-length table."""
    from lrnnkit.errors import SizeLimitError
    cfg = TrainConfig(test_mix=[64, 4, 9])
    assert cfg.test_mix == (64, 4, 9) and TrainConfig.from_json(cfg.to_json()).test_mix == (64, 4, 9)
    for bad in ((64, 9, 4), (64, 0, 4), (0, 4, 9), (64, 4), "64,4,9", (64, 4, 9.0), (True, 4, 9)):
        with pytest.raises(InputError, match="test_mix"):
            TrainConfig(test_mix=bad)
    with pytest.raises(SizeLimitError, match="test_mix"):
        TrainConfig(test_mix=(1_000_000, 1, 100_000))
    r = train(TrainConfig(task="parity", layer="diagonal", width=8, heads=1, steps=3, batch=4, train_len=(3, 6),
                          test_len=(6, 12), eval_n=8, test_mix=(40, 5, 15)))
    assert r["test_mix"]["words"] == 40 and sum(r["test_mix"]["count"].values()) == 40
    assert set(r["final_accuracy"]) == {"6", "12"} and len(r["prefix_accuracy"]["12"]) == 12


def test_fp_iteration_is_checked_and_reaches_the_layer(tmp_path):
    """``fp_iteration``: "paper" (the default, a stored config without the field too) or "authors"
    (lrnnkit.layers.fixed_point, module text), fixed-point only, in the model's config only off the default. A tiny
    run trains 2 steps on the CPU with the authors' rule, its checkpoint rebuilds a layer with that rule, and its
    parameters differ from the same run under the printed rule (the option changes what is computed)."""
    for bad in ("Authors", "damped", 1, None):
        with pytest.raises(InputError, match=r"fp_iteration.*" + repr(bad).replace("(", r"\(")):
            TrainConfig(layer="fixed-point", fp_iteration=bad)
    with pytest.raises(InputError, match="fp_iteration applies to the fixed-point layer only"):
        TrainConfig(layer="deltanet", fp_iteration="authors")
    assert TrainConfig(layer="deltanet").fp_iteration == "paper"
    assert TrainConfig.from_json({"layer": "fixed-point"}).fp_iteration == "paper"     # a config written before it
    cfg = dict(task="parity", layer="fixed-point", width=8, heads=2, steps=2, batch=4, train_len=(2, 5),
               test_len=(5,), eval_n=4, bf16=False)
    runs = {}
    for rule in ("paper", "authors"):
        out = str(tmp_path / rule)
        r = train(TrainConfig(**cfg, fp_iteration=rule), out)
        assert r["steps"] == 2 and r["config"]["fp_iteration"] == rule
        doc, model = load_checkpoint(out)
        layer = model.mixers[0].layer
        assert layer.iteration_rule == rule and ("fp_iteration" in model.config) == (rule == "authors")
        assert doc["model_config"].get("fp_iteration") == (None if rule == "paper" else "authors")
        runs[rule] = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    assert not torch.equal(runs["paper"], runs["authors"])
