"""The executors of a sweep (lrnnkit.sweep.executors), without Ray: one point's outcome (result, status, error)
whatever the job does, the serial executor's order and callbacks, and the choice of executor by name. The Ray
executor runs in test_executors_ray.py."""
import pytest

from lrnnkit.errors import InputError
from lrnnkit.sweep.executors import EXECUTORS, SerialExecutor, execute_point, make_executor
from lrnnkit.sweep.jobs import run_collapse
from lrnnkit.sweep.spec import parse_spec


def test_a_point_runs_its_job():
    point = {"source": "parity", "format": "bf16", "steps": 300}
    out = execute_point("collapse", point, 7)
    assert out["status"] == "ok" and out["error"] is None and out["seconds"] >= 0
    assert out["result"] == run_collapse(dict(point), 7)


def test_a_run_dir_is_the_jobs_third_argument_and_its_meta_goes_to_meta(tmp_path):
    """With a run directory the job is called ``job(point, seed, run_dir)``; its ``_meta`` table leaves the result
    for the outcome's meta."""
    out = execute_point("train", {"x": 1}, 5, lambda p, s, d: {"d": d, "_meta": {"resumed_from_step": 3}},
                        str(tmp_path))
    assert out["status"] == "ok" and out["result"] == {"d": str(tmp_path)}
    assert out["meta"] == {"resumed_from_step": 3}
    assert execute_point("train", {"x": 1}, 5, lambda p, s: {"n": 1})["meta"] == {}


@pytest.mark.parametrize("job,error", [(lambda p, s: 1 / 0, "ZeroDivisionError: division by zero"),
                                       (lambda p, s: [p], "TypeError: a job must return a dict, got list"),
                                       (lambda p, s: {"_meta": [1]}, "TypeError: a job's _meta must be a dict, "
                                                                     "got list")])
def test_a_failing_job_is_a_failed_outcome(job, error):
    out = execute_point("collapse", {"x": 1}, 0, job)
    assert out == {**out, "result": {}, "status": "failed", "error": error}


def test_serial_executor_runs_in_order_with_callbacks():
    spec = parse_spec({"kind": "collapse", "params": {"steps": 5}, "grid": {"source": ["parity"],
                                                                            "format": ["bf16", "fp16"]}})
    events = []
    tasks = [(i, {"n": i}, 10 + i, None) for i in range(3)]
    with make_executor("serial") as ex:
        assert isinstance(ex, SerialExecutor) and ex.slots == 1
        ex.run(tasks, lambda p, s: {"n": p["n"], "seed": s}, spec,
               on_done=lambda i, o: events.append(("done", i, o["result"])),
               on_start=lambda i: events.append(("start", i)))
    assert events == [e for i in range(3) for e in (("start", i), ("done", i, {"n": i, "seed": 10 + i}))]


def test_executor_names():
    assert EXECUTORS == ("serial", "ray")
    with pytest.raises(InputError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(InputError, match="needs --executor ray"):
        make_executor("serial", address="auto")


def test_out_of_memory_is_an_oom_outcome_serially_too(tmp_path):
    """An out-of-memory error (torch.cuda's class, by name, or MemoryError) is ``oom``, not ``failed``; the serial
    sweep records it and goes on (one process has the whole device: no retry)."""
    from lrnnkit.sweep import run_sweep

    class OutOfMemoryError(RuntimeError):
        pass

    def job(point, seed):
        if point["n"] == 1:
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if point["n"] == 2:
            raise MemoryError()
        return {"n": point["n"]}

    assert execute_point("train", {"n": 1}, 0, job)["status"] == "oom"
    res = run_sweep({"kind": "train", "num_gpus": "auto", "grid": {"n": [0, 1, 2, 3]}}, str(tmp_path), job_fn=job,
                    progress=False, plots=False)
    assert [r["status"] for r in res["records"]] == ["ok", "oom", "oom", "ok"]
    assert res["records"][1]["error"] == "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert (res["done"], res["failed"], res["oom"]) == (2, 2, 2)
