"""A training run is keyed by what its task files hold, not by their path: a checkpoint records the SHA-256 of
every file its task read, a resume on an edited file is refused in one line, ``extract`` and the horizon refuse a
checkpoint whose task changed (content, or letters: the padding token would be read as a letter), and a resume
reads the metrics file with memory bounded by what it holds (a process with a 4 GiB address-space limit resumes)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from proofs_tests._paths import REPO
from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.learn import checkpoint as ck
from lrnnkit.learn.tasks import make_task
from lrnnkit.learn.train import TrainConfig, load_checkpoint, train

EX = os.path.join(REPO, "examples")
TINY = dict(layer="diagonal", width=8, heads=2, short_conv=False, steps=8, batch=4, lr=1e-2, train_len=(2, 6),
            test_len=(6,), eval_n=8, log_every=1, checkpoint_every=2)

# parity with a third letter "2" that keeps the state: the task "gained a letter"
PARITY3 = {"format": "lrnnkit.fsa", "version": 1, "name": "parity3", "alphabet": ["0", "1", "2"], "states": 2,
           "start": 0, "delta": [[0, 1, 0], [1, 0, 1]], "labels": ["0", "1"]}


def _task_file(tmp_path, src="parity.json"):
    p = tmp_path / "task.json"
    shutil.copy(os.path.join(EX, src), p)
    return str(p)


def test_task_records_the_files_it_read(tmp_path):
    p = _task_file(tmp_path)
    t = make_task(p)
    assert list(t.inputs) == [os.path.abspath(p)]
    assert len(t.inputs[os.path.abspath(p)]) == 64
    assert make_task("parity").inputs == {}


def test_resume_on_an_edited_task_file_is_refused(tmp_path):
    p, out = _task_file(tmp_path), str(tmp_path / "run")
    cfg = dict(TINY, task=p)
    train(TrainConfig(**cfg), out, stop_at=4, evaluate_at_end=False)
    doc = json.loads(open(os.path.join(out, ck.CKPT_JSON)).read())
    assert doc["inputs"] == {os.path.abspath(p): make_task(p).inputs[os.path.abspath(p)]}
    shutil.copy(os.path.join(EX, "div3.json"), p)            # same path, other automaton
    with pytest.raises(InputError, match=r"made from other input: .*task\.json' changed \(sha256"):
        train(TrainConfig(**cfg), out, evaluate_at_end=False)
    shutil.copy(os.path.join(EX, "parity.json"), p)          # the same bytes again: resumes
    assert train(TrainConfig(**cfg), out, evaluate_at_end=False)["steps"] == 8


def test_resume_from_another_directory_with_the_same_bytes(tmp_path, monkeypatch):
    """Content, not path: the relative task path names another file after a change of directory; with the same
    bytes the run resumes, with other bytes it is refused."""
    out = str(tmp_path / "run")
    for d, src in (("a", "parity.json"), ("b", "parity.json"), ("c", "div3.json")):
        (tmp_path / d).mkdir()
        shutil.copy(os.path.join(EX, src), tmp_path / d / "task.json")
    cfg = dict(TINY, task="task.json")
    monkeypatch.chdir(tmp_path / "a")
    train(TrainConfig(**cfg), out, stop_at=4, evaluate_at_end=False)
    monkeypatch.chdir(tmp_path / "c")
    with pytest.raises(InputError, match="made from other input"):
        train(TrainConfig(**cfg), out, evaluate_at_end=False)
    monkeypatch.chdir(tmp_path / "b")
    assert train(TrainConfig(**cfg), out, evaluate_at_end=False)["steps"] == 8


def test_checkpoint_inputs_table_is_checked(tmp_path):
    p, out = _task_file(tmp_path), str(tmp_path / "run")
    train(TrainConfig(**dict(TINY, task=p)), out, stop_at=2, evaluate_at_end=False)
    path = os.path.join(out, ck.CKPT_JSON)
    doc = json.loads(open(path).read())
    for bad in ({"relative.json": "0" * 64}, {os.path.abspath(p): "xyz"}, [p]):
        with open(path, "w") as fh:
            json.dump(dict(doc, inputs=bad), fh)
        with pytest.raises(InputError, match="'inputs' must be a table"):
            ck.read(path, TrainConfig.from_json)


def _cli(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr()


def test_extract_refuses_a_task_file_edited_since_training(tmp_path, capsys):
    pytest.importorskip("aalpy")
    p, out = _task_file(tmp_path), str(tmp_path / "run")
    train(TrainConfig(**dict(TINY, task=p)), out, evaluate_at_end=False)
    shutil.copy(os.path.join(EX, "div3.json"), p)
    rc, cap = _cli(["extract", out], capsys)
    assert rc == 2 and "trained on other input" in cap.err and "task.json' changed" in cap.err
    assert len(cap.err.strip().splitlines()) == 1


def test_extract_refuses_a_task_that_gained_a_letter(tmp_path, capsys):
    """A checkpoint without an inputs record (written before it existed) still gets the vocabulary check."""
    pytest.importorskip("aalpy")
    p, out = _task_file(tmp_path), str(tmp_path / "run")
    train(TrainConfig(**dict(TINY, task=p)), out, evaluate_at_end=False)
    for nm in (ck.CKPT_JSON, ck.PREV_JSON):
        path = os.path.join(out, nm)
        if os.path.exists(path):
            doc = json.loads(open(path).read())
            doc.pop("inputs")
            open(path, "w").write(json.dumps(doc))
    with open(p, "w") as fh:
        json.dump(PARITY3, fh)
    rc, cap = _cli(["extract", out], capsys)
    assert rc == 2 and "reads 3 tokens" in cap.err and "now has 4 tokens" in cap.err, cap.err
    doc, _ = load_checkpoint(out)
    with pytest.raises(InputError, match="the task changed since training"):
        ck.task_of(doc, "checkpoint")


_RESUME_UNDER_LIMIT = r"""
import resource, sys
lim = 4 << 30
resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
from lrnnkit.learn.train import TrainConfig, train
cfg = TrainConfig(task="parity", layer="diagonal", width=8, heads=2, short_conv=False, steps=6, batch=4, lr=1e-2,
                  train_len=(2, 6), test_len=(6,), eval_n=8, log_every=1, checkpoint_every=3)
train(cfg, sys.argv[1], stop_at=3, evaluate_at_end=False)
print(train(cfg, sys.argv[1], evaluate_at_end=False)["steps"])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux applies it")
def test_resume_fits_a_4_gib_address_space(tmp_path):
    """The resume reads metrics.jsonl (and the checkpoint) with memory that grows with the file, not with the
    16 GiB bound on it: under a 4 GiB address-space limit it resumes (it died with MemoryError when the bound
    was allocated up front)."""
    env = {**os.environ, "PYTHONPATH": REPO, "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", _RESUME_UNDER_LIMIT, str(tmp_path / "run")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.split()[-1] == "6", r.stderr[-2000:]


def test_the_fixed_point_training_cap_reaches_the_layer_and_only_that_layer():
    """``fp_train_iters`` (003, Section 3: 16 for state tracking, 100 otherwise) is the fixed-point layer's
    ``train_max_iters``; the model's config carries it only off the default (16), so that earlier checkpoints'
    configs stay as they were; another layer with it set is refused, one line; out of range is refused."""
    from lrnnkit.errors import InputError as IE
    from lrnnkit.learn.train import TrainConfig, build
    _, m, _ = build(TrainConfig(task="parity", layer="fixed-point", width=8, heads=2, steps=1, fp_train_iters=100))
    assert m.mixers[0].layer.train_max_iters == 100 and m.config["fp_train_iters"] == 100
    _, m, _ = build(TrainConfig(task="parity", layer="fixed-point", width=8, heads=2, steps=1))
    assert m.mixers[0].layer.train_max_iters == 16 and "fp_train_iters" not in m.config
    with pytest.raises(IE, match="fixed-point layer only"):
        TrainConfig(layer="deltanet", fp_train_iters=100)
    for bad in (0, 10 ** 6, 2.5, True):
        with pytest.raises(IE):
            TrainConfig(layer="fixed-point", fp_train_iters=bad)
    assert TrainConfig.from_json({"layer": "fixed-point"}).fp_train_iters == 16     # a config written before it
