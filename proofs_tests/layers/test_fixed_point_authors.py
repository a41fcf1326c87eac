"""The 003 authors' FPRNN beside lrnnkit's fixed-point layer at 003's state-tracking settings
(``benchmarks/bench_fixed_point.py --authors PATH --protocol``): the smoke sizes run both models end to end on
CPU, on the same batches, and write the JSON and the table. Needs the authors' files, exported by
``benchmarks/export_fp_rnn.py`` into ``benchmarks/.fp_rnn`` (their repository has no license, so they are not in
this one), and einops, which their block imports."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AUTHORS = os.path.join(REPO, "benchmarks", ".fp_rnn")
BENCH = os.path.join(REPO, "benchmarks", "bench_fixed_point.py")


def test_the_protocol_smoke_runs_both_models(tmp_path):
    if not os.path.isfile(os.path.join(AUTHORS, "models", "fp_rnn_block.py")):
        pytest.skip("the authors' files are absent: run benchmarks/export_fp_rnn.py on a git mirror of "
                    "github.com/dr-faustus/fp-rnn")
    if importlib.util.find_spec("einops") is None:
        pytest.skip("einops (imported by the authors' block) is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO] + sys.path), OUT=str(tmp_path))
    r = subprocess.run([sys.executable, BENCH, "--authors", AUTHORS, "--protocol", "--smoke", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads((tmp_path / "fixed_point_protocol.json").read_text())
    runs = doc["runs"]
    assert [(x["task"], x["model"]) for x in runs] == [
        (t, m) for t in ("group:A5", "group:S5") for m in ("authors' FPRNN", "lrnnkit FixedPointLayer")]
    cap = doc["protocol"]["max_iters"]
    for x in runs:
        assert x["steps"] == doc["protocol"]["steps"]
        assert sorted(map(int, x["test_accuracy"])) == sorted(doc["protocol"]["test_len"])
        assert all(0.0 <= v <= 1.0 for v in x["test_accuracy"].values())
        assert math.isfinite(x["seconds"]) and x["seconds"] > 0
        # every forward iterated at least once and at most the cap (theirs adds its one differentiable iteration)
        assert 1.0 <= x["iterations_train"] <= cap + 1 and 1.0 <= x["iterations_eval"] <= cap + 1
    # same data, same seed, same sizes: the two models of a group differ in their parameters, not in the task
    for t in ("group:A5", "group:S5"):
        a, b = (x for x in runs if x["task"] == t)
        assert a["config"] == b["config"] and a["parameters"] != b["parameters"]
    table = (tmp_path / "fixed_point_protocol.md").read_text()
    assert table.count("authors' FPRNN") == 2 and table.count("003 (paper)") == 2
