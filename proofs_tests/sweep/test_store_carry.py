"""A train sweep that spans several runs of a machine with a time limit: each run ends (SIGKILL, or SIGTERM as
``timeout`` sends it: between points or in the middle of one), its store is carried to a fresh directory (as it is
brought back and sent with the next run), and resumed there; the finished records equal an uninterrupted run's,
timing aside, with no point recorded twice and no finished point run again.

A train point cut in the middle resumes from the last checkpoint in its run directory ``OUT/runs/<point_key>``,
which travels with the store (lrnnkit.learn.train resumes bit-identically: on one CPU thread, float arithmetic is
deterministic, so the resumed point's metrics, final tensors and record are those of an uninterrupted run).

What may differ, named: the training run's own wall-clock ``seconds`` (a result key) and the record's ``meta``
(:data:`META_KEYS`: timing, worker pid, executor, and ``resumed_from_step``, the step the run continued from).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from proofs_tests._kill import kill_when
from proofs_tests._paths import REPO

torch = pytest.importorskip("torch")

from lrnnkit.learn import step as step_module  # noqa: E402
from lrnnkit.learn.train import lr_at  # noqa: E402
from lrnnkit.sweep import RecordStore, run_sweep, strip_meta  # noqa: E402

ROOT = REPO
STEPS, EVERY = 24, 4
SPEC = {"kind": "train", "params": {"layer": "deltanet", "width": 8, "heads": 1, "steps": STEPS, "batch": 4,
                                    "train_len": [2, 6], "test_len": [6], "eval_n": 8, "log_every": 2,
                                    "checkpoint_every": EVERY},
        "grid": {"task": ["parity"], "eig_range": ["-1,1", "0,1"], "replicate": [0, 1, 2]}}
N = 6
TIMING = ("seconds",)                  # the training run's wall-clock time, a result key
META_KEYS = {"seconds", "executor", "pid", "finished_at", "resumed_from_step"}
CODE = """
import sys, torch
torch.set_num_threads(1)
from lrnnkit.sweep import run_sweep
run_sweep({spec!r}, sys.argv[1], progress=False, plots=False)
"""
# the end of a machine's run at a chosen checkpoint of the second point: SIGKILL just before it is written (the
# steps since the one before are lost), or SIGTERM just after (``timeout``'s signal: the step ends, the run saves)
CUT_CODE = """
import os, signal, sys, torch
torch.set_num_threads(1)
from lrnnkit.learn import checkpoint as ck
from lrnnkit.sweep import run_sweep
save, seen = ck.save, []
def cut(out, **kw):
    if out not in seen:
        seen.append(out)
    if seen.index(out) == 1 and kw["step"] == {at}:
        if {sig!r} == "KILL":
            os.kill(os.getpid(), signal.SIGKILL)
        text = save(out, **kw)
        os.kill(os.getpid(), signal.SIGTERM)
        return text
    return save(out, **kw)
ck.save = cut
run_sweep({spec!r}, sys.argv[1], progress=False, plots=False)
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "OMP_NUM_THREADS": "1"}


def _spec() -> dict:
    return json.loads(json.dumps(SPEC))


@pytest.fixture(scope="module")
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def reference(one_thread, tmp_path_factory):
    """An uninterrupted sweep of SPEC: ``(result, store directory)``."""
    d = str(tmp_path_factory.mktemp("ref"))
    ref = run_sweep(_spec(), d, progress=False, plots=False)
    assert ref["done"] == N and all(r["status"] == "ok" for r in ref["records"])
    assert all(r["meta"]["resumed_from_step"] == 0 and r["steps"] == STEPS for r in ref["records"])
    return ref, d


def _records(d) -> int:
    try:
        with open(os.path.join(d, "records.jsonl"), "rb") as fh:
            return sum(1 for line in fh if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def _run_until(d: str, n_records: int, timeout: float = 120) -> bool:
    """Run the sweep into ``d`` in a child process; SIGKILL it once ``d`` holds ``n_records`` records (then it is
    in the next point, or between two). True if it was killed, False if it finished first."""
    return kill_when(CODE.format(spec=SPEC), _env(), lambda: _records(d), n_records, timeout, args=(d,))


def _untimed(records) -> list:
    """Records without what may differ (module docstring), after checking that ``meta`` holds nothing else."""
    assert all(set(r["meta"]) == META_KEYS for r in records)
    return [{k: v for k, v in r.items() if k not in TIMING} for r in strip_meta(records)]


def _keys_on_disk(d) -> list:
    keys = []
    for line in open(os.path.join(d, "records.jsonl")):
        try:
            keys.append(json.loads(line)["point_key"])
        except ValueError:                            # a line torn by the kill (the store skips it)
            pass
    return keys


def _files(d) -> dict:
    """Every file under ``d``: relative path -> bytes."""
    out = {}
    for root, _, names in os.walk(d):
        for nm in names:
            p = os.path.join(root, nm)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, d)] = fh.read()
    return out


def _metrics(run_dir) -> list:
    with open(os.path.join(run_dir, "metrics.jsonl")) as fh:
        return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in fh]


def _ckpt(run_dir) -> dict:
    with open(os.path.join(run_dir, "checkpoint.json")) as fh:
        return json.load(fh)


@pytest.mark.parametrize("sig, resumes_at", [("KILL", 4 * EVERY - EVERY), ("TERM", 4 * EVERY)])
def test_train_point_cut_mid_run_resumes_from_its_checkpoint_in_a_carried_store(reference, tmp_path, monkeypatch,
                                                                                  sig, resumes_at):
    ref, ref_dir = reference
    first, second = str(tmp_path / "machine1" / "store"), str(tmp_path / "machine2" / "store")
    p = subprocess.run([sys.executable, "-c", CUT_CODE.format(spec=SPEC, at=4 * EVERY, sig=sig), first],
                       env=_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode != 0, p.stderr                # the run ended in the middle of the second point
    store = RecordStore(first)
    done = store.load()
    (k0,) = done                                      # the first point finished, the second has no record
    k1 = ref["records"][1]["point_key"]
    assert list(done) == [ref["records"][0]["point_key"]] and k1 not in done
    assert _ckpt(store.run_dir(k1))["step"] == resumes_at < STEPS
    carried0 = done[k0]
    run0 = _files(store.run_dir(k0))

    shutil.copytree(first, second)                    # the store is brought back and goes with the next run
    shutil.rmtree(os.path.dirname(first))             # nothing of the first machine is needed any more
    for name, data in _files(second).items():         # the store names no absolute path (of either place)
        assert str(tmp_path).encode() not in data, name
    steps_run = []                                    # one call of lr_at per training step taken
    monkeypatch.setattr(step_module, "lr_at", lambda cfg, step: steps_run.append(step) or lr_at(cfg, step))
    res = run_sweep(_spec(), second, progress=False, plots=False)

    store = RecordStore(second)
    by_key = {r["point_key"]: r for r in res["records"]}
    # (a) the cut point continued from its last checkpoint, not from step 0: exactly the missing steps were run
    assert steps_run == list(range(resumes_at, STEPS)) + list(range(STEPS)) * (N - 2)
    assert by_key[k1]["meta"]["resumed_from_step"] == resumes_at and by_key[k1]["steps"] == STEPS
    assert all(by_key[r["point_key"]]["meta"]["resumed_from_step"] == 0 for r in ref["records"][2:])
    # (b) the finished point was not run again: its record (pid and time included) and run directory are as carried
    assert res["computed"] == N - 1 and res["done"] == N and res["missing"] == 0
    assert by_key[k0] == carried0 and _files(store.run_dir(k0)) == run0
    keys = _keys_on_disk(second)
    assert len(keys) == len(set(keys)) == N
    # (c) the records are an uninterrupted sweep's, timing aside; so are the cut run's metrics and final tensors
    assert _untimed(res["records"]) == _untimed(ref["records"])
    ref_run = RecordStore(ref_dir).run_dir(k1)
    assert _metrics(store.run_dir(k1)) == _metrics(ref_run)
    assert _ckpt(store.run_dir(k1))["sha256"] == _ckpt(ref_run)["sha256"]
    assert run_sweep(_spec(), second, progress=False, plots=False)["computed"] == 0
    assert not [name for name, data in _files(second).items() if str(tmp_path).encode() in data]


def test_train_sweep_killed_twice_and_carried_to_fresh_directories_equals_an_uninterrupted_one(reference, tmp_path):
    ref, _ = reference
    first, second, last = (str(tmp_path / d) for d in ("run1", "run2", "run3"))
    assert _run_until(first, 1)                       # the first run ends after one point
    have = len(RecordStore(first).load())
    assert 1 <= have < N
    shutil.copytree(first, second)                    # the store comes back and goes with the next run
    killed = _run_until(second, have + 2)
    got = len(RecordStore(second).load())
    assert (have + 2 <= got <= N) if killed else got == N
    shutil.rmtree(first)                              # nothing of the first directory is needed any more
    shutil.copytree(second, last)
    res = run_sweep(_spec(), last, progress=False, plots=False)
    assert res["computed"] == N - got and res["done"] == N and res["missing"] == 0
    assert _untimed(res["records"]) == _untimed(ref["records"])
    keys = _keys_on_disk(last)
    assert len(keys) == len(set(keys)) == N           # no point recorded twice
    # benchmarks/compare_sweep_stores.py, the check a GPU carry is judged by, agrees; and it can fail
    from benchmarks import compare_sweep_stores as cmp
    assert cmp.main([last, reference[1]]) == 0
    recs = open(os.path.join(last, "records.jsonl")).read().splitlines()
    bad = json.loads(recs[-1])
    bad["final_accuracy"] = {k: v + 0.5 for k, v in bad["final_accuracy"].items()}
    with open(os.path.join(last, "records.jsonl"), "a") as fh:     # a later ok record of a point is the one read
        fh.write(json.dumps(bad) + "\n")
    res = cmp.compare(last, reference[1])
    assert not res["equal"] and [r["why"] for r in res["rows"] if not r["equal"]] == ["final_accuracy"]
    assert cmp.main([last, str(tmp_path)]) == 2                    # no records there: one line, exit 2
