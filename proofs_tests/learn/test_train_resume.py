"""Training and experiments survive kill -9 and Ctrl-C; checkpoints are one unit, validated on reading, and locked;
every training number is range-checked before work starts.

The kill tests run the work in a subprocess, SIGKILL it at a random point (drawn from a seeded generator: the
metrics line count at which it dies, so kills land before, during and after checkpoint writes), resume, and
compare with an uninterrupted run: the metrics (every logged loss, accuracy, learning rate) and the final tensors
must be bit-identical (same CPU, one thread: float arithmetic is deterministic there), timings aside.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch

from proofs_tests._kill import kill_when
from proofs_tests._paths import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.learn import checkpoint as ck
from lrnnkit.learn.train import TrainConfig, load_checkpoint, train

ROOT = REPO
TINY = dict(task="parity", layer="diagonal", width=8, heads=2, short_conv=False, steps=120, batch=4, lr=1e-2,
            train_len=(2, 6), test_len=(6, 12), eval_n=16, log_every=1, checkpoint_every=3)
B = ["--layer", "diagonal", "--batch", "4", "--width", "8", "--heads", "2", "--test-len", "8", "--no-short-conv"]


def _env():
    return {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "OMP_NUM_THREADS": "1"}


def _metrics(d) -> list:
    with open(os.path.join(d, "metrics.jsonl")) as fh:
        return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in fh]


def _strip(res: dict) -> dict:
    return {k: v for k, v in res.items() if k not in ("seconds", "checkpoint", "_model")}


def _lines(path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_at(code: str, watch, target: int, timeout: float = 120) -> bool:
    """Start ``python -c code``; SIGKILL it once ``watch()`` reaches ``target``. True if it was killed (False: it
    finished first)."""
    return kill_when(code, _env(), watch, target, timeout)


TRAIN_CODE = """
import json, sys, torch
torch.set_num_threads(1)
from lrnnkit.learn.train import TrainConfig, train
res = train(TrainConfig(**json.loads(sys.argv[1] if len(sys.argv) > 1 else {cfg!r})), {out!r})
"""


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_train_killed_at_random_points_resumes_bit_identical(tmp_path, seed):
    torch.set_num_threads(1)
    ref = train(TrainConfig(**TINY), str(tmp_path / "ref"))
    out = str(tmp_path / "run")
    code = TRAIN_CODE.format(cfg=json.dumps({**TINY, "train_len": list(TINY["train_len"]),
                                             "test_len": list(TINY["test_len"])}), out=out)
    rng = random.Random(seed)
    kills = 0
    for _ in range(2):   # killed up to twice, at increasing random metric counts
        target = _lines(os.path.join(out, "metrics.jsonl")) + rng.randint(1, 40)
        kills += _kill_at(code, lambda: _lines(os.path.join(out, "metrics.jsonl")), target)
    assert kills >= 1
    res = train(TrainConfig(**TINY), out)
    m = _metrics(out)
    assert [r["step"] for r in m] == list(range(1, TINY["steps"] + 1))     # nothing lost, nothing twice
    assert m == _metrics(str(tmp_path / "ref"))
    assert _strip(res) == _strip(ref)
    da, _ = load_checkpoint(str(tmp_path / "ref"))
    db, _ = load_checkpoint(out)
    assert da["_tensors"].keys() == db["_tensors"].keys()
    assert all(torch.equal(v, db["_tensors"][k]) for k, v in da["_tensors"].items())
    assert da["rng"] == db["rng"] and da["step"] == db["step"] == TINY["steps"]


def _tiny_experiment_code(out: str) -> str:
    return f"""
import torch
torch.set_num_threads(1)
from lrnnkit.learn import experiments as E
from lrnnkit.learn.train import TrainConfig
def runs(scale):
    return [(f"Mamba-like diagonal [{{e[0]:g}},{{e[1]:g}}]", TrainConfig(**{{**{TINY!r}, "eig_range": e, "steps": 60}}))
            for e in ((-1.0, 1.0), (0.0, 1.0))]
E.EXPERIMENTS["000-parity"].runs = runs
E.run_experiment("000-parity", "tiny", "cpu", {out!r})
"""


def _experiment_here(out: str) -> None:
    from lrnnkit.learn.experiments import EXPERIMENTS
    torch.set_num_threads(1)
    orig = EXPERIMENTS["000-parity"].runs
    try:
        exec(compile(_tiny_experiment_code(out), "<experiment>", "exec"), {})
    finally:
        EXPERIMENTS["000-parity"].runs = orig


def test_experiment_killed_at_random_points_resumes_like_an_uninterrupted_run(tmp_path):
    ref, out = str(tmp_path / "ref"), str(tmp_path / "run")
    _experiment_here(ref)            # the uninterrupted run
    rng = random.Random(7)

    def progress():   # metrics lines of both configurations together
        return sum(_lines(os.path.join(out, d, "metrics.jsonl")) for d in
                   (os.listdir(out) if os.path.isdir(out) else []) if os.path.isdir(os.path.join(out, d)))
    kills = 0
    for _ in range(2):
        kills += _kill_at(_tiny_experiment_code(out), progress, progress() + rng.randint(5, 50))
    assert kills >= 1
    _experiment_here(out)            # the resumption
    a = json.load(open(os.path.join(ref, "results.json")))
    b = json.load(open(os.path.join(out, "results.json")))
    assert a.keys() == b.keys() and a["judgement"] == b["judgement"]
    assert {k: _strip(v) for k, v in a["runs"].items()} == {k: _strip(v) for k, v in b["runs"].items()}
    for d in os.listdir(ref):
        if os.path.isdir(os.path.join(ref, d)):
            assert _metrics(os.path.join(ref, d)) == _metrics(os.path.join(out, d))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_saves_exits_130_and_resumes(tmp_path, sig):
    """A real SIGINT (or SIGTERM, as a job manager sends) to `lrnnkit train` (no periodic checkpoints): exit 130
    (143 for SIGTERM: 128 + the signal's number) after saving the checkpoint of the last complete step, no
    traceback; rerunning the same command continues from there to the end."""
    out = str(tmp_path / "run")
    argv = [sys.executable, "-m", "lrnnkit", "train", "parity", *B, "--steps", "200", "--train-len", "2:6",
            "--out", out, "--checkpoint-every", "off", "--json"]
    p = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while _lines(os.path.join(out, "metrics.jsonl")) < 1 and p.poll() is None and time.time() - t0 < 120:
        time.sleep(0.01)
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err and "internal error" not in err and "checkpoint saved" in err
    doc = json.load(open(os.path.join(out, "checkpoint.json")))
    assert 50 <= doc["step"] < 200
    r = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["steps"] == 200
    steps = [rec["step"] for rec in _metrics(out)]
    assert steps == list(range(50, 201, 50))


def test_a_crash_between_tensors_and_json_leaves_a_resumable_checkpoint(tmp_path, monkeypatch):
    """The tensors of step 6 are written, the process dies before its JSON: checkpoint.json still names step 3's
    complete tensors, and resuming gives the uninterrupted run's result. A damaged checkpoint.json falls back to
    checkpoint.prev.json."""
    torch.set_num_threads(1)
    cfg = {**TINY, "steps": 12}
    ref = train(TrainConfig(**cfg), str(tmp_path / "ref"))
    out = str(tmp_path / "run")
    import lrnnkit.learn.checkpoint as fio   # the checkpoint writer's atomic_write_text
    real = fio.atomic_write_text

    def dying(path, text, *a, **k):
        if path.endswith("checkpoint.json") and json.loads(text)["step"] == 6:
            raise SystemExit("killed")
        return real(path, text, *a, **k)
    monkeypatch.setattr(fio, "atomic_write_text", dying)
    with pytest.raises(SystemExit):
        train(TrainConfig(**cfg), out)
    monkeypatch.setattr(fio, "atomic_write_text", real)
    assert json.load(open(os.path.join(out, "checkpoint.json")))["step"] == 3
    assert _strip(train(TrainConfig(**cfg), out)) == _strip(ref)
    # damage the newest checkpoint's JSON: the previous one (step 9) is used, with a warning
    out2 = str(tmp_path / "run2")
    train(TrainConfig(**cfg), out2, stop_at=10)
    with open(os.path.join(out2, "checkpoint.json"), "r+") as fh:
        fh.seek(20)
        fh.write("#")
    assert json.load(open(os.path.join(out2, "checkpoint.prev.json")))["step"] == 9
    assert _strip(train(TrainConfig(**cfg), out2)) == _strip(ref)
    assert _metrics(out2) == _metrics(str(tmp_path / "ref"))


def test_two_writers_on_one_run_directory(tmp_path, capsys):
    out = str(tmp_path / "run")
    os.makedirs(out)
    with ck.run_lock(out):
        with pytest.raises(InputError, match="in use by another lrnnkit process"):
            train(TrainConfig(**{**TINY, "steps": 2}), out)
        assert main(["experiment", "000-parity", "--out", out]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"pid {os.getpid()}" in err[0]
    train(TrainConfig(**{**TINY, "steps": 2}), out, evaluate_at_end=False)    # free again


# ------------------------------------------------------------------------------------------------ the loader
@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("ck") / "run")
    train(TrainConfig(**{**TINY, "steps": 2, "checkpoint_every": 0}), d, evaluate_at_end=False)
    return d


def _damaged(good_run, tmp_path, change) -> str:
    import shutil
    d = str(tmp_path / "bad")
    shutil.copytree(good_run, d)
    doc = json.load(open(os.path.join(d, "checkpoint.json")))
    change(doc, d)
    with open(os.path.join(d, "checkpoint.json"), "w") as fh:
        json.dump(doc, fh)
    return d


def _fifo(doc, d):
    os.mkfifo(os.path.join(d, "checkpoint-000000002-aaaaaaaaaaaa.safetensors"))
    doc["tensors"] = "checkpoint-000000002-aaaaaaaaaaaa.safetensors"


def _link(doc, d):
    target = os.path.join(d, doc["tensors"])
    os.rename(target, os.path.join(os.path.dirname(d), "outside.safetensors"))
    os.symlink(os.path.join(os.path.dirname(d), "outside.safetensors"), target)


BAD = {
    "missing sha256": (lambda doc, d: doc.pop("sha256"), "missing key"),
    "negative step": (lambda doc, d: doc.update(step=-5), "'step' must be an integer"),
    "step past the config": (lambda doc, d: doc.update(step=10 ** 9), "'step' must be an integer"),
    "bad rng hex": (lambda doc, d: doc.update(rng={"torch": "zz"}), "rng"),
    "short rng": (lambda doc, d: doc.update(rng={"torch": "00ff"}), "rng.torch"),
    "rng not a table": (lambda doc, d: doc.update(rng=[1]), "'rng'"),
    "param_groups a string": (lambda doc, d: doc.update(param_groups="x"), "param_groups"),
    "param_groups bad params": (lambda doc, d: doc.update(param_groups=[{"params": "a"}]), "param_groups"),
    "param_groups bad lr": (lambda doc, d: doc["param_groups"][0].update(lr="fast"), "'lr'"),
    "param_groups one too few": (lambda doc, d: doc["param_groups"].pop(), "parameter groups"),
    "extra config key": (lambda doc, d: doc["config"].update(colour="blue"), "unknown training option"),
    "config value out of range": (lambda doc, d: doc["config"].update(width=10 ** 9), "TRAIN_MAX_WIDTH"),
    "extra top-level key": (lambda doc, d: doc.update(extra=1), "unknown key"),
    "tensors /etc/passwd": (lambda doc, d: doc.update(tensors="/etc/passwd"), "'tensors' must name"),
    "tensors ../": (lambda doc, d: doc.update(tensors="../checkpoint.safetensors"), "'tensors' must name"),
    "tensors a FIFO": (_fifo, "not a regular file"),
    "tensors a link out": (_link, "symbolic link"),
    "elapsed NaN": (lambda doc, d: doc.update(elapsed=float("nan")), "'elapsed'"),
    "not a checkpoint": (lambda doc, d: doc.update(format="x"), "not an lrnnkit training checkpoint"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_damaged_checkpoint_is_one_line_exit_2(good_run, tmp_path, capsys, case):
    change, needle = BAD[case]
    d = _damaged(good_run, tmp_path, change)
    with pytest.raises(InputError, match=needle) as ei:
        load_checkpoint(d)
    assert "\n" not in str(ei.value)
    # resuming a run from it: one line, exit 2, never "internal error"
    argv = ["train", "parity", "--layer", "diagonal", "--width", "8", "--heads", "2", "--no-short-conv",
            "--steps", "2", "--batch", "4", "--lr", "0.01", "--train-len", "2:6", "--test-len", "6,12", "--out", d]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lrnnkit: error:") and "internal error" not in err[0]


def test_checkpoint_json_from_dev_zero_is_refused_unread():
    with pytest.raises(InputError, match="not a regular file"):
        load_checkpoint("/dev/zero")


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 20, 10 ** 20) | st.floats()
                           | st.text(max_size=8),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                           max_leaves=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["step", "config", "model_config", "param_groups", "rng", "elapsed", "tensors", "sha256",
                            "progress", "version", "torch", "code"]), value=json_values)
def test_any_field_value_loads_or_is_refused_cleanly(good_run, key, value):
    """Whatever JSON value replaces one field, load_checkpoint returns the model or raises InputError."""
    _load_changed(good_run, lambda doc: doc.update({key: value}))


def _load_changed(good_run, change) -> None:
    """load_checkpoint on a copy of ``good_run`` whose JSON ``change(doc)`` edited: it loads or raises InputError
    (any other exception fails the test)."""
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "c")
        shutil.copytree(good_run, d)
        p = os.path.join(d, "checkpoint.json")
        doc = json.load(open(p))
        change(doc)
        with open(p, "w") as fh:
            json.dump(doc, fh)
        try:
            load_checkpoint(d)
        except InputError:
            pass


# ------------------------------------------------------------------------------------------------ limits
@pytest.mark.parametrize("extra,needle", [
    (["--n-h", "1000"], "TRAIN_MAX_N_H"),
    (["--width", "100000000"], "TRAIN_MAX_WIDTH"),
    (["--batch", "100000000"], "TRAIN_MAX_BATCH"),
    (["--test-len", "1000000000"], "TRAIN_MAX_LENGTH"),
    (["--train-len", "1:1000000000"], "TRAIN_MAX_LENGTH"),
    (["--batch", "4096", "--train-len", "3:5000"], "TRAIN_MAX_BATCH_TOKENS"),
    (["--steps", "300000000"], "TRAIN_MAX_STEPS"),
    (["--heads", "1000"], "TRAIN_MAX_HEADS"),
    (["--head-dim", "100000"], "TRAIN_MAX_HEAD_DIM"),
    (["--layers", "1000"], "TRAIN_MAX_LAYERS"),
    (["--layer", "deltanet", "--width", "8192", "--heads", "256", "--head-dim", "1024", "--layers", "64"],
     "TRAIN_MAX_PARAMETERS"),
    (["--seed", "-1"], "--seed: seed must be >= 0"),
    (["--head-dim", "-3"], "--head-dim) must be >= 1"),
    (["--heads", "0"], "--heads) must be >= 1"),
    (["--lr", "nan"], "--lr"),
    (["--max-seconds", "-1"], "--max-seconds"),
    (["--checkpoint-every", "soon"], "--checkpoint-every"),
    (["--steps", "0"], "--steps) must be >= 1"),
])
def test_train_limits_one_line_exit_2(extra, needle, capsys):
    t0 = time.time()
    assert main(["train", "parity", *B, "--steps", "2", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert time.time() - t0 < 20        # refused before any work


@pytest.mark.parametrize("task", ["sum:1", "counter:1"])
def test_single_class_tasks_are_refused(task, capsys):
    assert main(["train", task, *B, "--steps", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "single output class" in err[0]


def test_max_seconds_before_the_first_record(capsys):
    """--max-seconds so short that no step is logged: the run still reports (train accuracy n/a), exit 0."""
    assert main(["train", "parity", *B, "--steps", "1000", "--max-seconds", "1e-9"]) == 0
    out = capsys.readouterr().out
    assert "0 steps" in out and "stopped by --max-seconds" in out and "train accuracy n/a" in out


def test_export_seed_must_be_non_negative(tmp_path, capsys):
    m = str(tmp_path / "p.json")
    assert main(["compile", "parity", "-o", m]) == 0
    capsys.readouterr()
    assert main(["export", m, "--to", "fla", "-o", str(tmp_path / "f"), "--random", "3", "--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed: seed must be >= 0" in err[0]


# ------------------------------------------------------------------------------------------------ sweeps
def test_sweep_train_records_report_the_seed_that_ran(tmp_path):
    from lrnnkit.sweep.runner import run_sweep
    spec = {"kind": "train", "params": {"task": "parity", "layer": "diagonal", "width": 8, "heads": 1, "steps": 2,
                                        "batch": 4, "train_len": [2, 4], "test_len": [4], "eval_n": 4},
            "grid": {"seed": [5, 6]}}
    res = run_sweep(spec, str(tmp_path), progress=False, plots=False)
    assert [(r["seed"], r["config"]["seed"]) for r in res["records"]] == [(5, 5), (6, 6)]


@pytest.mark.parametrize("bad,needle", [({"steps": 300000000}, "TRAIN_MAX_STEPS"),
                                        ({"width": 10 ** 12}, "TRAIN_MAX_WIDTH"), ({"seed": -1}, "seed"),
                                        ({"train_len": "abc"}, "train_len")])
def test_sweep_train_points_go_through_the_same_limits(tmp_path, bad, needle):
    from lrnnkit.sweep.runner import run_sweep
    spec = {"kind": "train", "params": {"task": "parity", "layer": "diagonal", **bad}, "grid": {"heads": [1]}}
    t0 = time.time()
    with pytest.raises(InputError, match=needle):
        run_sweep(spec, str(tmp_path), progress=False, plots=False)
    assert not os.path.exists(os.path.join(str(tmp_path), "records.jsonl")) and time.time() - t0 < 20


def test_an_oversized_tensor_file_is_refused_before_reading(good_run, tmp_path, capsys):
    """A tensor file larger than the model and its optimizer state can be (a planted 64 MiB file, sparse) is
    refused from its size alone when a run resumes."""
    def grow(doc, d):
        with open(os.path.join(d, doc["tensors"]), "r+b") as fh:
            fh.truncate(64 * 2 ** 20)
    d = _damaged(good_run, tmp_path, grow)
    argv = ["train", "parity", "--layer", "diagonal", "--width", "8", "--heads", "2", "--no-short-conv",
            "--steps", "2", "--batch", "4", "--lr", "0.01", "--train-len", "2:6", "--test-len", "6,12", "--out", d]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has 67108864 bytes" in err[0] and "CHECKPOINT_MAX_BYTES" in err[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(sorted(TrainConfig().to_json())), value=json_values)
def test_any_config_value_loads_or_is_refused_cleanly(good_run, key, value):
    """Whatever JSON value replaces one field of the stored training config (or of the model config), the
    checkpoint loads or is refused with an InputError -- never another exception."""

    def change(doc):
        doc["config"][key] = value
        if key in doc["model_config"]:
            doc["model_config"][key] = value
    _load_changed(good_run, change)


def test_a_planted_metrics_link_is_refused_and_its_target_untouched(tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "run"
    out.mkdir()
    os.symlink(victim, out / "metrics.jsonl")
    assert main(["train", "parity", *B, "--steps", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "symbolic link" in err[0]
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("loop", ["host", "device"])
def test_a_resumed_fixed_set_run_continues_the_epoch_order(tmp_path, loop):
    """``train_words`` = 10 in batches of 4: stopped at step 7 (position 28, inside epoch 2), resumed to step 12:
    the metrics, the parameters and the checkpoint's tensors equal the uninterrupted run's bit for bit (the batch
    of a step depends on the seed and the step only: the resumed run reads epoch 2's order where it stopped). A
    checkpoint of fresh batches is another setting: refused."""
    torch.set_num_threads(1)
    cfg = TrainConfig(**{**TINY, "steps": 12, "train_words": 10, "log_every": 1, "loop": loop})
    ref = train(cfg, str(tmp_path / "ref"))
    out = str(tmp_path / "run")
    first = train(cfg, out, stop_at=7, evaluate_at_end=False)
    assert first["steps"] == 7
    res = train(cfg, out)
    assert _metrics(out) == _metrics(str(tmp_path / "ref")) and len(_metrics(out)) == 12
    assert _strip(res) == _strip(ref)
    ta, tb = load_checkpoint(str(tmp_path / "ref"))[0]["_tensors"], load_checkpoint(out)[0]["_tensors"]
    assert ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)
    fresh = str(tmp_path / "fresh")
    train(TrainConfig(**{**TINY, "steps": 12, "loop": loop}), fresh, stop_at=3, evaluate_at_end=False)
    with pytest.raises(InputError, match="other settings.*train_words"):
        train(cfg, fresh)


def test_evaluations_during_training_survive_a_resume_and_match_the_batched_runs(tmp_path):
    """``eval_every``: an evaluation every k steps on the final evaluation's words, the final one last. A run stopped
    between evaluations and resumed lists the same evaluations, equal to the uninterrupted run's (the ones before its
    checkpoint read back from metrics.jsonl); the same runs trained as one batched model list them at the same steps
    with the same numbers (float32 on one CPU thread: the batched step is the separate steps to ~1e-6, so the
    accuracies on 16 words agree exactly unless a logit is within that of a tie). A negative value is refused."""
    from dataclasses import replace

    from lrnnkit.learn.batched import train_batched
    cfg = TrainConfig(task="parity", layer="diagonal", width=16, steps=40, batch=8, train_len=(2, 6),
                      test_len=(6, 12), eval_n=16, eval_every=10, device="cpu", loop="device")
    whole = train(cfg)
    evs = whole["evaluations"]
    assert [e["step"] for e in evs] == [10, 20, 30, 40]
    assert evs[-1]["test_accuracy"] == whole["test_accuracy"]
    assert len({json.dumps(e["test_accuracy"]) for e in evs}) > 1           # they are evaluations of other states
    out = str(tmp_path / "run")
    train(cfg, out, stop_at=25)
    assert [r["step"] for r in ck.read_evaluations(os.path.join(out, ck.METRICS))] == [10, 20]
    assert train(cfg, out)["evaluations"] == evs
    batched = train_batched([cfg, replace(cfg, seed=1)])
    assert batched[0]["evaluations"] == evs
    assert [e["step"] for e in batched[1]["evaluations"]] == [10, 20, 30, 40]
    assert "evaluations" not in train(replace(cfg, eval_every=0))
    with pytest.raises(InputError, match="eval_every"):
        TrainConfig(task="parity", layer="diagonal", eval_every=-1)


def test_auto_steps_cuts_the_run_not_the_callers_configuration():
    """``auto_steps`` fits the step count to ``max_seconds`` on the run's own copy: the caller's TrainConfig keeps its
    steps, so a second run from it (a paired comparison) is not silently shortened by the first one's timing."""
    cfg = TrainConfig(**{**TINY, "steps": 100_000, "max_seconds": 2.0, "auto_steps": True, "log_every": 10_000})
    res = train(cfg)
    assert res["steps"] <= res["config"]["steps"] < 100_000      # the run's schedule was cut to the budget
    assert cfg.steps == 100_000
