"""The Ray executor with ``num_gpus = "auto"`` on a local Ray with one logical GPU (no GPU needed): each task
asks for its point's share of the card, so points of share 1/4 run four at a time and a point of share 1 runs
alone; a run out of memory is run again with twice its share until it fits, and one out of memory on a whole card
is recorded ``oom`` while the sweep goes on. The points' peaks are set through :func:`lrnnkit.sweep.packing.
peak_bytes` (what the driver measures); the job is a stand-in that records what Ray gave it."""
from __future__ import annotations

import os
import time

import pytest

ray = pytest.importorskip("ray")

from lrnnkit.sweep import packing, run_sweep  # noqa: E402

GiB = 2**30
PEAKS = {"small": int(15.5 * GiB), "big": 80 * GiB, "eighth": 7 * GiB}    # on an 80 GiB card: 1/4, 1, 1/8


@pytest.fixture(scope="module")
def gpu_ray():
    ray.init(address="local", num_cpus=16, num_gpus=1, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture
def peaks(monkeypatch):
    monkeypatch.setattr(packing, "peak_bytes", lambda point: PEAKS[point["size"]])


def _spec(sizes):
    return {"kind": "train", "num_gpus": "auto", "gpu_memory_gb": 80, "max_retries": 0,
            "grid": {"case": [{"size": s, "n": i} for i, s in enumerate(sizes)]}}


def test_quarter_shares_run_four_at_a_time_and_a_whole_card_alone(gpu_ray, peaks, tmp_path):
    d = str(tmp_path / "running")
    os.makedirs(d)
    n_small = 8

    def job(point, seed):
        share = ray.get_runtime_context().get_assigned_resources().get("GPU")
        mine = os.path.join(d, f"{point['size']}-{point['n']}")
        open(mine, "w").close()
        seen = set()
        t_end = time.time() + 30
        while time.time() < t_end:     # a small run waits for the others that fit beside it
            now = set(os.listdir(d))
            seen |= now
            running = sum(x.startswith("small-") for x in now if not x.endswith(".done"))
            left = n_small - sum(x.startswith("small-") and x.endswith(".done") for x in now)
            if point["size"] == "big" or running >= min(4, left):
                break
            time.sleep(0.02)
        time.sleep(0.3)
        seen |= set(os.listdir(d))
        together = sorted(x for x in seen if not x.endswith(".done"))
        os.rename(mine, mine + ".done")
        return {"share": share, "together": together}

    res = run_sweep(_spec(["small"] * 4 + ["big"] + ["small"] * 4), str(tmp_path / "o"), executor="ray",
                    job_fn=job, progress=False, plots=False)
    assert res["done"] == 9
    recs = res["records"]
    for r in recs:
        assert r["share"] == r["meta"]["gpu_share"] == (1.0 if r["size"] == "big" else 0.25)
    big = [r for r in recs if r["size"] == "big"][0]
    assert big["together"] == ["big-4"]                        # alone on the card
    small = [r for r in recs if r["size"] == "small"]
    assert all(len(r["together"]) <= 4 and "big-4" not in r["together"] for r in small)
    assert max(len(r["together"]) for r in small) == 4        # four at once


def test_out_of_memory_doubles_the_share_until_it_fits_or_is_oom_on_a_whole_card(gpu_ray, peaks, tmp_path):
    log = str(tmp_path / "tries")
    os.makedirs(log)

    def job(point, seed):
        class OutOfMemoryError(RuntimeError):       # what torch.cuda raises, by name
            pass
        share = ray.get_runtime_context().get_assigned_resources().get("GPU")
        open(os.path.join(log, f"{point['n']}-{share}"), "w").close()
        if point["size"] == "big" or share < 0.5:
            raise OutOfMemoryError(f"needs more than {share}")
        return {"share": share}

    res = run_sweep(_spec(["eighth", "big", "small"]), str(tmp_path / "o"), executor="ray", job_fn=job,
                    progress=False, plots=False)
    by = {r["size"]: r for r in res["records"]}
    assert sorted(os.listdir(log)) == ["0-0.125", "0-0.25", "0-0.5", "1-1.0", "2-0.25", "2-0.5"]
    assert by["eighth"]["status"] == by["small"]["status"] == "ok"
    assert by["eighth"]["meta"]["gpu_share"] == by["small"]["meta"]["gpu_share"] == 0.5
    assert by["big"]["status"] == "oom" and by["big"]["meta"]["gpu_share"] == 1.0
    assert by["big"]["error"] == "OutOfMemoryError: needs more than 1.0"
    assert (res["done"], res["failed"], res["oom"]) == (2, 1, 1)


def test_a_train_sweep_with_auto_shares_end_to_end(gpu_ray, tmp_path):
    """The built-in train job (on the CPU) under ``num_gpus = "auto"``: the driver measures the point (one shape
    for both replicates), Ray runs each with that share of the logical GPU, the records carry it."""
    from lrnnkit.sweep.packing import gpu_share
    params = dict(layer="deltanet", width=8, heads=1, batch=4, train_len=[2, 6], test_len=[6], eval_n=8, steps=5,
                  device="cpu")
    spec = {"kind": "train", "num_gpus": "auto", "gpu_memory_gb": 2, "params": params,
            "grid": {"replicate": [0, 1]}}
    res = run_sweep(spec, str(tmp_path), executor="ray", progress=False, plots=False)
    want = float(gpu_share(packing.peak_bytes({**params, "replicate": 0}), 2 * GiB))
    assert want == 6 / 16       # 1.25 x (512 MiB + about 1 MiB) on 2 GiB
    assert res["done"] == 2 and [r["meta"]["gpu_share"] for r in res["records"]] == [want, want]
