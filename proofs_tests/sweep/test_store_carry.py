"""A train sweep that spans several runs of a machine with a time limit: each run is killed (SIGKILL, as the end of
a GPU run ends it: between points or in the middle of one), its store is carried to a fresh directory (as it is
brought back and sent with the next run), and resumed there; the finished records equal an uninterrupted run's,
timing aside, with no point recorded twice.

A train point cut in the middle restarts from step 0 on resumption (sweep train jobs keep no run directory);
training is deterministic on the CPU for a given seed, so its record is the same."""
from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from proofs_tests._kill import kill_when
from proofs_tests._paths import REPO

pytest.importorskip("torch")

from lrnnkit.sweep import RecordStore, run_sweep, strip_meta  # noqa: E402

ROOT = REPO
SPEC = {"kind": "train", "params": {"layer": "deltanet", "width": 8, "heads": 1, "steps": 24, "batch": 4,
                                    "train_len": [2, 6], "test_len": [6], "eval_n": 8, "log_every": 10},
        "grid": {"task": ["parity"], "eig_range": ["-1,1", "0,1"], "replicate": [0, 1, 2]}}
CODE = """
import sys, torch
torch.set_num_threads(1)
from lrnnkit.sweep import run_sweep
run_sweep({spec!r}, sys.argv[1], progress=False, plots=False)
"""


def _records(d) -> int:
    try:
        with open(os.path.join(d, "records.jsonl"), "rb") as fh:
            return sum(1 for line in fh if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def _run_until(d: str, n_records: int, timeout: float = 120) -> bool:
    """Run the sweep into ``d`` in a child process; SIGKILL it once ``d`` holds ``n_records`` records (then it is
    in the next point, or between two). True if it was killed, False if it finished first."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}
    return kill_when(CODE.format(spec=SPEC), env, lambda: _records(d), n_records, timeout, args=(d,))


def _untimed(records) -> list:
    """Records without their timing: ``meta`` and the training run's own wall-clock ``seconds``."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in strip_meta(records)]


def test_train_sweep_killed_twice_and_carried_to_fresh_directories_equals_an_uninterrupted_one(tmp_path):
    ref = run_sweep(json.loads(json.dumps(SPEC)), str(tmp_path / "ref"), progress=False, plots=False)
    assert ref["done"] == 6 and all(r["status"] == "ok" for r in ref["records"])
    first, second, last = (str(tmp_path / d) for d in ("run1", "run2", "run3"))
    assert _run_until(first, 1)                       # the first run ends after one point
    have = len(RecordStore(first).load())
    assert 1 <= have < 6
    shutil.copytree(first, second)                    # the store comes back and goes with the next run
    killed = _run_until(second, have + 2)
    got = len(RecordStore(second).load())
    assert (have + 2 <= got <= 6) if killed else got == 6
    shutil.rmtree(first)                              # nothing of the first directory is needed any more
    shutil.copytree(second, last)
    res = run_sweep(json.loads(json.dumps(SPEC)), last, progress=False, plots=False)
    assert res["computed"] == 6 - got and res["done"] == 6 and res["missing"] == 0
    assert _untimed(res["records"]) == _untimed(ref["records"])
    keys = []
    for line in open(os.path.join(last, "records.jsonl")):
        try:
            keys.append(json.loads(line)["point_key"])
        except ValueError:                            # a line torn by the kill (the store skips it)
            pass
    assert len(keys) == len(set(keys)) == 6           # no point recorded twice
