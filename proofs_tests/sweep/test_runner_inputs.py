"""A sweep point is keyed by what its files hold: its record keeps the SHA-256 of the files its source or task read,
and a rerun after the file changed computes the point again (one line on stderr says which file) instead of
reusing the stale record; the same bytes under the same name are never recomputed."""
from __future__ import annotations

import os
import shutil

import pytest

from proofs_tests._paths import REPO
from lrnnkit.sweep import run_sweep
from lrnnkit.sweep.jobs import point_inputs

EX = os.path.join(REPO, "examples")


def _spec(src):
    return {"kind": "certify", "params": {"float_steps": 10}, "grid": {"source": [src, "parity"]}}


def test_a_point_on_an_edited_file_is_computed_again(tmp_path, capsys):
    src = tmp_path / "auto.json"
    shutil.copy(os.path.join(EX, "parity.json"), src)
    out = str(tmp_path / "out")
    first = run_sweep(_spec(str(src)), out, progress=False, plots=False)
    by = {r["source"]: r for r in first["records"]}
    assert by[str(src)]["automaton_states"] == 2 and by["parity"]["inputs"] == {}
    assert list(by[str(src)]["inputs"]) == [os.path.abspath(src)]
    again = run_sweep(_spec(str(src)), out, progress=False, plots=False)
    assert again["computed"] == 0
    capsys.readouterr()
    shutil.copy(os.path.join(EX, "div3.json"), src)
    third = run_sweep(_spec(str(src)), out, progress=False, plots=False)
    err = capsys.readouterr().err
    assert third["computed"] == 1                     # the file's point, not the preset's
    assert {r["source"]: r for r in third["records"]}[str(src)]["automaton_states"] == 3
    assert "1 finished point computed again" in err and "auto.json' changed (sha256" in err
    assert len(err.strip().splitlines()) == 1


def test_point_inputs_of_each_kind(tmp_path):
    src = tmp_path / "a.json"
    shutil.copy(os.path.join(EX, "parity.json"), src)
    for kind, key in (("certify", "source"), ("collapse", "source"), ("train", "task")):
        got = point_inputs(kind, {key: str(src)})
        assert list(got) == [os.path.abspath(src)] and len(got[os.path.abspath(src)]) == 64
    assert point_inputs("certify", {"source": "random:3:2"}) == {}
    assert point_inputs("theorems", {"id": "000-thm1"}) == {}
    assert point_inputs("certify", {"source": str(tmp_path / "missing.json")}) == {}


@pytest.mark.parametrize("edit", ["div3.json", None])
def test_a_train_point_whose_file_changed_starts_afresh(tmp_path, edit):
    """A train point cut short on one file, rerun after the file changed, does not resume the other automaton's
    checkpoint: it starts from step 0 (with the same file it resumes)."""
    from lrnnkit.sweep import jobs
    src = tmp_path / "t.json"
    shutil.copy(os.path.join(EX, "parity.json"), src)
    point = dict(task=str(src), layer="diagonal", width=8, heads=2, short_conv=False, steps=6, batch=4, lr=1e-2,
                 train_len=[2, 4], test_len=[4], eval_n=8, log_every=1, checkpoint_every=2, device="cpu")
    run_dir = str(tmp_path / "run")
    from lrnnkit.learn.train import TrainConfig, train
    train(TrainConfig(**point), run_dir, stop_at=4, evaluate_at_end=False)
    if edit:
        shutil.copy(os.path.join(EX, edit), src)
    res = jobs.run_train(point, 0, run_dir)
    assert res["_meta"]["resumed_from_step"] == (0 if edit else 4)
    assert res["steps"] == 6
