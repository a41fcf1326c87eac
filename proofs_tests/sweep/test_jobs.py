"""The job kinds of a sweep (lrnnkit.sweep.jobs) at tiny scale: certify (random automata drawn from the point's
seed), theorems (the registry's checks agree with the recorded verdicts), train (lrnnkit.learn's training with the
point's derived seed; a parameter TrainConfig does not know is a spec error)."""
from __future__ import annotations

import pytest

from lrnnkit.errors import InputError
from lrnnkit.sweep.runner import run_sweep

TINY_TRAIN = {"kind": "train", "params": {"layer": "deltanet", "width": 8, "heads": 1, "steps": 4, "batch": 4,
                                          "train_len": [2, 6], "test_len": [6], "eval_n": 8, "log_every": 2},
              "grid": {"task": ["parity"], "eig_range": ["-1,1"]}}


def test_certify_and_theorems_jobs(tmp_path):
    res = run_sweep({"kind": "certify", "params": {"float_steps": 50},
                     "grid": {"source": ["parity", "random:3:2"], "replicate": [0, 1]}},
                    str(tmp_path / "c"), progress=False)
    assert res["done"] == 4 and all(r["certified"] is True for r in res["records"])
    # random:N:K is drawn from the point's seed: the two replicates are (almost surely) different automata
    assert len({r["seed"] for r in res["records"]}) == 4
    th = run_sweep({"kind": "theorems", "grid": {"id": ["000:equation-3", "002:appendix-A.2.1"]}},
                   str(tmp_path / "t"), progress=False)
    assert th["done"] == 2 and all(r["agrees"] for r in th["records"])


def test_train_job_at_tiny_scale(tmp_path):
    """The train kind runs lrnnkit.learn's training (train(TrainConfig));
    the seed is the point's derived seed; a parameter TrainConfig does not know is a spec error."""
    res = run_sweep(dict(TINY_TRAIN), str(tmp_path), progress=False, plots=False)
    (r,) = res["records"]
    assert r["status"] == "ok", r["error"]
    assert r["steps"] == 4 and set(r["test_accuracy"]) == {"6"} and r["config"]["seed"] == r["seed"]
    assert "_model" not in r and "summary.txt" in " ".join(res["summary_files"])
    with pytest.raises(InputError, match="unknown parameter.*widht"):
        run_sweep({"kind": "train", "grid": {"task": ["parity"], "widht": [8]}}, str(tmp_path / "b"))
