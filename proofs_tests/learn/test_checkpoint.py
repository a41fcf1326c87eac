"""A checkpoint records the code that computed its steps (:func:`lrnnkit.learn.checkpoint.code_id`); resuming from
one written by other code warns once and still resumes; the field is optional and checked like every other.

A resumed run repeats an uninterrupted one bit for bit only on the same code (a fused kernel that landed between
two GPU calls changed the bits of a sweep resumed across them): the warning says so, the result is unchanged."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.learn import checkpoint as ck
from lrnnkit.learn.train import TrainConfig, load_checkpoint, train
from proofs_tests._paths import REPO

TINY = dict(task="parity", layer="diagonal", width=8, heads=2, short_conv=False, steps=12, batch=4, lr=1e-2,
            train_len=(2, 6), test_len=(6, 12), eval_n=16, log_every=1, checkpoint_every=3)
WARNING = "the resumed run will not repeat an uninterrupted run bit for bit"


def _strip(res: dict) -> dict:
    return {k: v for k, v in res.items() if k not in ("seconds", "checkpoint", "_model")}


def _edit(d: str, change) -> None:
    p = os.path.join(d, ck.CKPT_JSON)
    doc = json.load(open(p))
    change(doc)
    with open(p, "w") as fh:
        json.dump(doc, fh)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    torch.set_num_threads(1)
    return _strip(train(TrainConfig(**TINY), str(tmp_path_factory.mktemp("ref") / "run")))


def _other_commit(doc):
    doc["code"].update(source="0" * 16, commit="f" * 40, dirty=False)


def _no_code(doc):
    doc.pop("code")


@pytest.mark.parametrize("change, warned", [(_other_commit, True), (_no_code, False), (lambda doc: None, False)],
                         ids=["other code", "no code field", "same code"])
def test_resume_warns_once_on_other_code_and_resumes_the_same(tmp_path, capsys, reference, change, warned):
    torch.set_num_threads(1)
    out = str(tmp_path / "run")
    train(TrainConfig(**TINY), out, stop_at=6, evaluate_at_end=False)
    doc = json.load(open(os.path.join(out, ck.CKPT_JSON)))
    assert doc["step"] == 6 and doc["code"] == ck.code_id() and doc["torch"] == torch.__version__
    _edit(out, change)
    capsys.readouterr()
    assert _strip(train(TrainConfig(**TINY), out)) == reference
    lines = [line for line in capsys.readouterr().err.splitlines() if WARNING in line]
    assert len(lines) == (1 if warned else 0), lines
    if warned:
        assert lines[0].startswith(f"lrnnkit: warning: checkpoint in {out!r} was written by lrnnkit ")
        assert "commit ffffffffffff" in lines[0] and f"(torch {torch.__version__})" in lines[0]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("ck") / "run")
    train(TrainConfig(**{**TINY, "steps": 2, "checkpoint_every": 0}), d, evaluate_at_end=False)
    return d


@pytest.mark.parametrize("field, value", [
    ("code", "0.1.0"), ("code", ["0.1.0"]), ("code", {"commit": 5}), ("code", {"commit": None}),
    ("code", {"commit": "a" * 81}), ("code", {"Commit!": "a"}), ("code", {f"k{c}": "v" for c in "abcdefghi"}),
    ("torch", 2.5), ("torch", "x" * 81), ("torch", None)])
def test_a_malformed_code_or_torch_field_is_refused(saved, tmp_path, field, value):
    import shutil
    d = str(tmp_path / "bad")
    shutil.copytree(saved, d)
    _edit(d, lambda doc: doc.update({field: value}))
    with pytest.raises(InputError, match=f"checkpoint '.*{ck.CKPT_JSON}': '{field}' must be") as ei:
        load_checkpoint(d)
    assert "\n" not in str(ei.value)


def test_code_id_without_git_is_the_version_and_the_source(monkeypatch):
    def no_git(*a, **k):
        raise FileNotFoundError("git")
    for fail in (no_git, lambda *a, **k: (_ for _ in ()).throw(subprocess.TimeoutExpired("git", 5))):
        monkeypatch.setattr(ck, "_code", None)
        monkeypatch.setattr(ck.subprocess, "run", fail)
        code = ck.code_id()
        assert set(code) == {"lrnnkit", "source"} and len(code["source"]) == 16


@pytest.mark.skipif(not os.path.exists(os.path.join(REPO, ".git")), reason="not a git checkout")
def test_code_id_names_the_checkout_commit(monkeypatch):
    monkeypatch.setattr(ck, "_code", None)
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    code = ck.code_id()
    assert code["commit"] == head and isinstance(code["dirty"], bool)
    assert ck.code_id() is not ck.code_id() and ck._code == code        # cached; callers get copies


def test_the_source_hash_decides_where_both_record_one(monkeypatch):
    ours = {"lrnnkit": "0.1.0", "source": "a" * 16, "commit": "1" * 40, "dirty": False}
    monkeypatch.setattr(ck, "_code", ours)
    t = torch.__version__
    assert ck.code_mismatch({"torch": t}) is None                                   # written before 'code'
    assert ck.code_mismatch({"torch": t, "code": dict(ours)}) is None
    assert ck.code_mismatch({"torch": t, "code": {**ours, "commit": "2" * 40}}) is None  # same files
    assert ck.code_mismatch({"torch": t, "code": {**ours, "source": "b" * 16}}) is not None
    assert ck.code_mismatch({"torch": t, "code": {**ours, "lrnnkit": "0.0.9"}}) is not None
    assert ck.code_mismatch({"torch": "1.0", "code": dict(ours)}) is not None
    no_src = {k: v for k, v in ours.items() if k != "source"}
    assert ck.code_mismatch({"torch": t, "code": {**no_src, "commit": "2" * 40}}) is not None
    assert ck.code_mismatch({"torch": t, "code": {**no_src, "dirty": True}}) is not None
    assert ck.code_mismatch({"torch": t, "code": no_src}) is None
