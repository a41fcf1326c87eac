"""benchmarks/horizons_of_checkpoints.py, the horizons of trained checkpoints: the exhaustive budget is the largest
whole set of lengths, each run's JSON carries lrnnkit.learn.horizon.horizon_checkpoint's answer per precision,
the reflection drift never grows (every GH factor is a contraction), and the plot and table are written."""
from __future__ import annotations

import json
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from lrnnkit.learn.horizon import horizon_checkpoint  # noqa: E402
from lrnnkit.learn.train import TrainConfig, train  # noqa: E402
from proofs_tests._paths import REPO  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import horizons_of_checkpoints as hz  # noqa: E402

sys.path.remove(os.path.join(REPO, "benchmarks"))


@given(st.integers(2, 8), st.integers(1, 10 ** 6))
@settings(max_examples=60, deadline=None)
def test_the_exhaustive_budget_is_every_word_up_to_the_longest_length_that_fits(k, max_words):
    got = hz.exhaustive_budget(k, max_words)
    sums = [sum(k ** i for i in range(1, L + 1)) for L in range(1, 40)]
    assert got in sums
    L = sums.index(got) + 1
    assert got <= max_words or L == 1                       # length 1 always
    assert sums[L] > max_words                              # the next length would not fit


def test_exhaustive_budget_of_the_recorded_runs():
    assert hz.exhaustive_budget(2, 60000) == 2 ** 15 - 2     # parity: lengths 1..14
    assert hz.exhaustive_budget(6, 60000) == 55986           # S3: lengths 1..6


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hz") / "run"
    train(TrainConfig(task="parity", layer="deltaproduct", n_h=2, eig_range=(-1.0, 1.0), width=16, heads=2,
                      steps=20, batch=8, lr=1e-2, train_len=(3, 12), test_len=(24,)), str(d))
    return str(d)


def test_the_script_records_the_checkpoints_horizon_per_precision(run_dir, tmp_path):
    out, png = tmp_path / "out", tmp_path / "plot.png"
    hz.main([run_dir, "--max-len", "32", "--samples", "8", "--max-words", "30", "--fp64-samples", "4",
             "--margin-samples", "4", "--extract-seconds", "5", "--out", str(out), "--plot", str(png)])
    rec = json.loads((out / "run.json").read_text())
    assert rec["task"] == "parity" and rec["step"] == 20 and rec["eig_range"] == [-1.0, 1.0]
    for prec, bf16 in (("fp32", False), ("bf16", True)):
        want = horizon_checkpoint(run_dir, max_len=32, max_words=30, samples=8, max_extract_seconds=5.0,
                                  max_extract_queries=5000, autocast_cpu=bf16)
        got = rec["horizon"][prec]
        assert got["bf16_autocast"] is bf16 and got["words_checked"] <= 30
        for k in ("horizon", "shortest_wrong_word", "exhaustive_up_to", "words_checked", "accuracy_by_length",
                  "wrong_at_length", "extracted_states", "isomorphic_to_target"):
            assert got[k] == want[k], (prec, k)
    assert set(rec["fp64"]["accuracy_by_length"]) == set(rec["horizon"]["fp32"]["accuracy_by_length"])
    for h in rec["drift"]["heads"]:       # products of GH factors with beta in [0, 2], |k| <= 1: never longer
        norms = [h["norm"][str(L)] for L in hz.DRIFT_LENGTHS]
        assert all(0 <= b <= a + 1e-9 for a, b in zip([1.0] + norms, norms)), h
    assert set(rec["letters"]) == {"0", "1"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| parity [-1,1] | fp32 | 20/20 |" in hz.table([rec])


def test_the_drift_of_a_many_letter_group_stays_inside_its_words():
    """Z60: a word of 576 random letters lacks a given letter in its first 64 positions about a third of the time
    ((59/60)^64); the drift once started its 512 letters there and read past the word's end (IndexError on a GPU
    run's checkpoint). The reflecting letter is now placed within the lead when missing."""
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import build
    cfg = TrainConfig(task="group:Z60", layer="deltaproduct", n_h=1, eig_range=(-1.0, 1.0), width=8, heads=2,
                      steps=1, batch=2, train_len=(3, 4), test_len=(4,), device="cpu")
    _, model, _ = build(cfg)
    out = hz.reflection_drift(model.float().eval(), make_task("group:Z60"), words=6, seed=3)
    assert len(out["heads"]) == 2
    for h in out["heads"]:
        norms = [h["norm"][str(L)] for L in hz.DRIFT_LENGTHS]
        assert all(0 <= b <= a + 1e-9 for a, b in zip([1.0] + norms, norms)), h


def test_without_plot_or_record_the_docs_plot_is_left_alone(run_dir, tmp_path, monkeypatch):
    """A look at a new checkpoint (no ``--plot``, no ``--record``) draws nothing: the default once redrew the
    committed docs/_static/horizons_gpu_checkpoints.png with that one checkpoint."""
    drawn = []
    monkeypatch.setattr(hz, "plot", lambda recs, path, prec: drawn.append(path))
    hz.main([run_dir, "--max-len", "16", "--samples", "4", "--max-words", "10", "--fp64-samples", "0",
             "--margin-samples", "2", "--extract-seconds", "1", "--precisions", "fp32", "--out", str(tmp_path)])
    assert drawn == []
    assert (tmp_path / "run.json").exists()
