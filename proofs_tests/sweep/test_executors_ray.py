"""lrnnkit sweep on Ray (local, 2 CPUs): the same records as serial; a worker that dies mid-task is retried and the
sweep completes (a train point resumes from its checkpoint); a worker that keeps dying gives a failed record, the
others go on.

One local Ray for the module (startup is the bulk of the time)."""
from __future__ import annotations

import json
import os

import pytest

ray = pytest.importorskip("ray")

from lrnnkit.sweep import parse_spec, run_sweep, strip_meta  # noqa: E402
from lrnnkit.sweep.jobs import run_collapse  # noqa: E402

GRID = {"kind": "collapse", "params": {"steps": 400},
        "grid": {"source": ["parity", "group:S3", "counter:5", "flipflop"], "format": ["fp8-e4m3-ieee", "bf16"],
                 "policy": ["matvec", "op"]}}


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def serial_records(tmp_path_factory):
    res = run_sweep(dict(GRID), str(tmp_path_factory.mktemp("serial")), progress=False, plots=False)
    assert res["done"] == 16
    return strip_meta(res["records"])


def test_serial_and_ray_give_identical_records(local_ray, serial_records, tmp_path):
    res = run_sweep(dict(GRID), str(tmp_path), executor="ray", progress=False, plots=False)
    assert res["computed"] == 16 and res["executor"] == "ray"
    assert strip_meta(res["records"]) == serial_records
    pids = {r["meta"]["pid"] for r in res["records"]}
    assert os.getpid() not in pids                          # really computed in Ray workers
    again = run_sweep(dict(GRID), str(tmp_path), executor="ray", progress=False, plots=False)
    assert again["computed"] == 0 and strip_meta(again["records"]) == serial_records


def test_a_worker_killed_mid_sweep_is_retried_and_the_sweep_completes(local_ray, serial_records, tmp_path):
    flag = str(tmp_path / "crashed-once")

    def job(point, seed):                       # a local function: Ray ships it to the workers by value
        if point["source"] == "counter:5" and point["policy"] == "op" and not os.path.exists(flag):
            with open(flag, "w") as fh:
                fh.write(str(os.getpid()))
            os._exit(1)                          # the worker process dies mid-task, once
        return run_collapse(point, seed)

    res = run_sweep(dict(GRID), str(tmp_path / "o"), executor="ray", job_fn=job, progress=False, plots=False)
    assert os.path.exists(flag)
    assert res["done"] == 16 and res["failed"] == 0 and res["missing"] == 0
    assert strip_meta(res["records"]) == serial_records


def test_a_ray_worker_killed_mid_training_is_retried_from_its_checkpoint(local_ray, tmp_path):
    """SIGKILL to the Ray worker training a point, once it has checkpointed step 10 or later in its run directory
    (``OUT/runs/<point_key>``, pid in its ``.lock``): Ray re-runs the task, which continues from the last
    checkpoint; the records are the serial sweep's (``meta`` and the run's wall-clock ``seconds`` aside)."""
    import signal
    import threading
    import time
    torch = pytest.importorskip("torch")
    from lrnnkit.sweep import RecordStore
    spec = {"kind": "train", "params": {"layer": "deltanet", "width": 8, "heads": 1, "steps": 150, "batch": 4,
                                        "train_len": [2, 6], "test_len": [6], "eval_n": 8, "log_every": 5,
                                        "checkpoint_every": 5, "device": "cpu"},
            "grid": {"task": ["parity"], "replicate": [0, 1]}}
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ref = run_sweep(json.loads(json.dumps(spec)), str(tmp_path / "serial"), progress=False, plots=False)
    finally:
        torch.set_num_threads(n)
    out = str(tmp_path / "ray")
    run_dir = RecordStore(out).run_dir(ref["records"][0]["point_key"])
    killed = []

    def kill_after_step_10():
        while not killed:
            try:
                with open(os.path.join(run_dir, "checkpoint.json")) as fh:
                    step = json.load(fh)["step"]
                with open(os.path.join(run_dir, ".lock")) as fh:
                    pid = int(fh.read())
            except (OSError, ValueError):
                step = 0
            if step >= 10:
                os.kill(pid, signal.SIGKILL)
                killed.append(step)
            time.sleep(0.005)

    watcher = threading.Thread(target=kill_after_step_10, daemon=True)
    watcher.start()
    res = run_sweep(json.loads(json.dumps(spec)), out, executor="ray", progress=False, plots=False)
    killed.append(None)
    watcher.join()
    resumed = res["records"][0]["meta"]["resumed_from_step"]
    assert killed[0] is not None and 10 <= killed[0] <= resumed < 150 and resumed % 5 == 0
    assert res["done"] == 2 and res["records"][1]["meta"]["resumed_from_step"] == 0
    untimed = [{k: v for k, v in r.items() if k != "seconds"} for r in strip_meta(res["records"])]
    assert untimed == [{k: v for k, v in r.items() if k != "seconds"} for r in strip_meta(ref["records"])]


def test_a_worker_that_keeps_dying_is_a_failed_point(local_ray, tmp_path):
    spec = parse_spec({"kind": "collapse", "max_retries": 1, "params": {"steps": 50},
                       "grid": {"source": ["parity", "counter:3"], "format": ["bf16"]}})

    def job(point, seed):
        if point["source"] == "counter:3":
            os._exit(3)
        return run_collapse(point, seed)

    res = run_sweep(spec, str(tmp_path), executor="ray", job_fn=job, progress=False, plots=False)
    bad = [r for r in res["records"] if r["status"] == "failed"]
    assert res["done"] == 1 and len(bad) == 1 and bad[0]["source"] == "counter:3"
    assert "after 1 retries" in bad[0]["error"]
    lines = [json.loads(x) for x in open(os.path.join(str(tmp_path), "records.jsonl"))]
    assert len(lines) == 2


def test_a_raising_point_on_ray_is_failed_with_its_error(local_ray, tmp_path):
    res = run_sweep({"kind": "collapse", "params": {"steps": 50},
                     "grid": {"source": ["parity", "group:NOPE"], "format": ["bf16"]}},
                    str(tmp_path), executor="ray", progress=False, plots=False)
    assert (res["done"], res["failed"]) == (1, 1)
    assert "NOPE" in [r for r in res["records"] if r["status"] == "failed"][0]["error"]


@pytest.mark.parametrize("sig, rc, word", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_stopped_ray_sweep_keeps_what_finished_and_resumes(sig, rc, word, tmp_path):
    """SIGINT (Ctrl-C) or SIGTERM (``timeout``'s signal, the end of a machine's run) to `lrnnkit sweep --executor
    ray` mid-sweep: exit 130 / 143 with one line (no stack dump of Ray's C++ signal handler, no failed check of its
    task manager), the finished points stay in the store, and the rerun computes exactly the others."""
    import signal
    import subprocess
    import sys
    import time
    spec = tmp_path / "s.toml"
    spec.write_text('kind = "collapse"\n[params]\nsteps = 60\npolicy = "proof"\n[grid]\n'
                    'source = ["parity", "group:S3", "counter:5", "flipflop", "group:D4", "even-pairs"]\n'
                    'format = ["bf16", "fp16"]\n')
    out = tmp_path / "o"
    recs = out / "records.jsonl"
    p = subprocess.Popen([sys.executable, "-m", "lrnnkit", "sweep", str(spec), "--executor", "ray", "--num-cpus", "2",
                          "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not (recs.exists() and recs.read_text().count("\n") >= 2) and time.time() - t0 < 120 and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=120)
    kept = [json.loads(x) for x in recs.read_text().splitlines()]
    assert p.returncode == rc, err[-2000:]
    assert word in err and "received at time" not in err and "Check failed" not in err, err[-2000:]
    assert 2 <= len(kept) < 12 and all(r["status"] == "ok" for r in kept)
    res = run_sweep(str(spec), str(out), progress=False, plots=False)
    assert res["computed"] == 12 - len(kept) and res["done"] == 12
