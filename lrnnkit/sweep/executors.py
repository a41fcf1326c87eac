"""Executors: run the points of a sweep one after the other (``serial``) or as Ray core tasks (``ray``).

Both call :func:`execute_point` on each task ``(index, point, seed, run_dir)`` and hand every outcome to the
caller's ``on_done`` as it finishes (the caller appends it to the store at once). ``run_dir`` (resumable kinds:
the point's run directory in the store, else None) is where the job keeps its checkpoints. Outcomes do not depend
on the executor: a point's seed comes from the spec (:meth:`~lrnnkit.sweep.spec.SweepSpec.point_seed`), and a
job's exception becomes a ``failed`` outcome with its message (the other points go on), and an out-of-memory
error (:func:`~lrnnkit.sweep.packing.is_oom`: ``torch.cuda.OutOfMemoryError``, ``MemoryError``) an ``oom``
outcome.

Ray (optional extra ``ray``: ``pip install -e '.[ray]'`` in the checkout): ``address=None`` starts a local Ray
with this machine's cores (and GPUs);
``address="auto"`` or ``"ray://host:10001"`` joins a running cluster, whose nodes need lrnnkit installed. Tasks ask
for the spec's ``num_cpus`` / ``num_gpus`` (fractions pack several small training runs on one GPU; Ray's GPU
tasks run in a fresh worker process each, so a finished run's GPU memory is freed). With ``num_gpus = "auto"``
each task asks for its point's own share (``shares``, :mod:`lrnnkit.sweep.packing`), its worker's CUDA allocator
is capped at that share, and a point whose run is out of memory is run again with twice its share, until it
fits or is out of memory on a whole card: then it is recorded ``oom``; the share of its last run is in the
record's ``meta.gpu_share``. A worker
process that dies mid-task (killed, out of memory) is re-run by Ray up to ``max_retries`` times (Ray's
``max_retries``; ``retry_exceptions`` stays off: a job's own exception is an answer, not a fault); if it still
dies, the point is recorded ``failed`` with Ray's error. A re-run train point resumes from its last checkpoint
(the run directory is a path of the driver's file system: on a cluster, the nodes need to share it for that).
Ctrl-C cancels the tasks in flight and stops; every point finished before it is already in the store. SIGTERM
(``timeout``'s signal, the end of a machine's run) does the same on Ray, raising :class:`SweepTerminated` (a
``KeyboardInterrupt``) in the driver instead of Ray's own C++ handler, which prints a stack dump and dies.
"""
from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from typing import Callable

from ..errors import InputError
from .jobs import RESULT_META, get_job, jsonable
from .packing import cap_process_memory, is_oom

__all__ = ["execute_point", "SerialExecutor", "RayExecutor", "make_executor", "EXECUTORS"]

EXECUTORS = ("serial", "ray")


def execute_point(kind: str, point: dict, seed: int, job_fn: Callable | None = None,
                  run_dir: str | None = None) -> dict:
    """Run one point (in whatever process the executor chose): ``{"result", "status", "error", "seconds",
    "pid", "meta"}``; ``run_dir`` is passed to the job as its third argument when given, and the job's
    :data:`~lrnnkit.sweep.jobs.RESULT_META` table becomes ``meta``. Exceptions of the job become
    ``status = "failed"`` with ``error = "Type: message"`` (``status = "oom"`` for an out-of-memory error,
    :func:`~lrnnkit.sweep.packing.is_oom`); process exits and Ctrl-C are not caught."""
    t0 = time.perf_counter()
    meta = {}
    try:
        fn = job_fn if job_fn is not None else get_job(kind).run
        args = (dict(point), seed) if run_dir is None else (dict(point), seed, run_dir)
        result, status, error = jsonable(fn(*args)), "ok", None
        if not isinstance(result, dict):
            raise TypeError(f"a job must return a dict, got {type(result).__name__}")
        meta = result.pop(RESULT_META, None) or {}
        if not isinstance(meta, dict):
            raise TypeError(f"a job's {RESULT_META} must be a dict, got {type(meta).__name__}")
    except Exception as exc:  # noqa: BLE001 - a point that raises is recorded as failed; the others go on
        result, status = {}, "oom" if is_oom(exc) else "failed"
        error = f"{type(exc).__name__}: {exc}"
        if os.environ.get("LRNNKIT_SWEEP_TRACEBACK"):
            error += "\n" + traceback.format_exc()
    return {"result": result, "status": status, "error": error, "seconds": time.perf_counter() - t0,
            "pid": os.getpid(), "meta": meta}


class SerialExecutor:
    """Every point in this process, in grid order (no Ray needed)."""

    name = "serial"
    slots = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, tasks, job_fn, spec, on_done: Callable, on_start: Callable | None = None,
            shares: dict | None = None) -> None:
        """``tasks``: list of ``(index, point, seed, run_dir)``; calls ``on_done(index, outcome)`` after each
        point (``shares`` is for the Ray executor: one process has the whole device)."""
        for idx, point, seed, run_dir in tasks:
            if on_start:
                on_start(idx)
            on_done(idx, execute_point(spec.kind, point, seed, job_fn, run_dir))


def _ray_execute(kind, point, seed, job_fn, run_dir, gpu_share=None):   # the Ray task body (module level)
    if gpu_share is not None:
        cap_process_memory(gpu_share)
    return execute_point(kind, point, seed, job_fn, run_dir)


def _probe(address: str, timeout: float = 5.0) -> None:
    """Fail fast on an unreachable ``host:port`` / ``ray://host:port`` (``ray.init`` retries for minutes)."""
    import socket
    if address == "auto" or address.startswith("local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise InputError(f"bad Ray address {address!r}: use auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address!r}: {exc.strerror or exc}") from None


class SweepTerminated(KeyboardInterrupt):
    """SIGTERM reached a Ray sweep's driver: the tasks in flight are cancelled as on Ctrl-C."""


def _terminated(signum, frame):
    raise SweepTerminated()


class RayExecutor:
    """Ray core tasks: one per point, at most ``window`` in flight (a bounded queue keeps Ctrl-C and memory cheap).

    ``num_cpus`` / ``num_gpus``: the local Ray's resources when it starts one (default: the machine's);
    ``init_kwargs``: passed to ``ray.init`` (e.g. ``{"include_dashboard": False}`` is the default)."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, num_gpus: float | None = None,
                 init_kwargs: dict | None = None, window: int | None = None):
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.init_kwargs = dict(init_kwargs or {})
        self.window = window
        self._started = False
        self._old_term = False          # False: not replaced; else the handler before (None: one not set in Python)
        self.ray = None
        self.slots = 1

    def __enter__(self):
        try:
            import ray
        except ImportError:
            raise InputError("the ray executor needs Ray: pip install -e '.[ray]' in the lrnnkit checkout (or use "
                             "--executor serial)") from None
        self.ray = ray
        if not ray.is_initialized():
            kw = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            kw.update(self.init_kwargs)
            if self.address:
                _probe(self.address)
            try:
                if self.address:
                    ray.init(address=self.address, **kw)
                else:
                    ray.init(address="local", num_cpus=self.num_cpus, num_gpus=self.num_gpus, **kw)  # a new one
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = self.address or "a local Ray"
                raise InputError(f"cannot start or join Ray at {where!r}: {str(exc).splitlines()[0]}") from None
            self._started = True
        if threading.current_thread() is threading.main_thread():
            # after ray.init, which installs its C++ failure handler for SIGTERM (a stack dump, then death)
            self._old_term = signal.signal(signal.SIGTERM, _terminated)
        return self

    def __exit__(self, *exc):
        if self._old_term is not False:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if self._old_term is None else self._old_term)
            self._old_term = False
        if self._started:
            self.ray.shutdown()
            self._started = False
        return False

    def run(self, tasks, job_fn, spec, on_done: Callable, on_start: Callable | None = None,
            shares: dict | None = None) -> None:
        """As :meth:`SerialExecutor.run`; ``shares``: ``{index: share of a GPU}`` of every task when the spec's
        ``num_gpus`` is ``"auto"`` (module docstring)."""
        ray = self.ray
        auto = spec.num_gpus == "auto"
        if auto and (shares is None or any(t[0] not in shares for t in tasks)):
            raise ValueError('num_gpus = "auto" needs the share of every task')
        least = min((shares[t[0]] for t in tasks), default=0.0) if auto else spec.num_gpus
        total = ray.cluster_resources()
        cpu_slots = total.get("CPU", 1) / spec.num_cpus if spec.num_cpus else float("inf")
        gpu_slots = total.get("GPU", 0) / least if least else float("inf")
        if least and not total.get("GPU"):
            raise InputError(f"the spec asks num_gpus = {spec.num_gpus} per task, and the Ray cluster has no GPU")
        self.slots = max(1, int(min(cpu_slots, gpu_slots)))
        window = self.window or max(4 * self.slots, 8)
        # a GPU task's worker exits after it (max_calls=1): the memory its run cached is given back to the card
        remote = ray.remote(max_calls=1 if least else 0)(_ray_execute)
        opts = {"num_cpus": spec.num_cpus, "max_retries": spec.max_retries, "retry_exceptions": False}
        fn_ref = ray.put(job_fn) if job_fn is not None else None
        queue = list(tasks)
        queue.reverse()
        pending: dict = {}

        def submit(task, share):
            idx, point, seed, run_dir = task
            gpus = share if auto else spec.num_gpus
            ref = remote.options(num_gpus=gpus, **opts).remote(spec.kind, point, seed, fn_ref, run_dir, share)
            pending[ref] = (task, share)

        try:
            while queue or pending:
                while queue and len(pending) < window:
                    task = queue.pop()
                    submit(task, shares[task[0]] if auto else None)
                    if on_start:
                        on_start(task[0])
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    task, share = pending.pop(ref)
                    idx = task[0]
                    try:
                        out = ray.get(ref)
                    except ray.exceptions.TaskCancelledError:
                        raise KeyboardInterrupt from None    # only a stop cancels tasks: no record
                    except ray.exceptions.RayTaskError as exc:
                        if isinstance(exc.cause, KeyboardInterrupt):   # Ctrl-C reached the worker first
                            raise KeyboardInterrupt from None
                        out = {"result": {}, "status": "failed", "seconds": None, "pid": None,
                               "error": f"{type(exc.cause or exc).__name__}: {exc.cause or exc}"}
                    except ray.exceptions.RayError as exc:   # the worker died more than max_retries times
                        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                        out = {"result": {}, "status": "failed", "seconds": None, "pid": None,
                               "error": f"{type(exc).__name__}: {msg} (after {spec.max_retries} retries)"}
                    if auto:
                        if out["status"] == "oom" and share < 1:
                            submit(task, min(1.0, 2 * share))     # a grid of sixteenths: exact
                            continue
                        out["meta"] = {**(out.get("meta") or {}), "gpu_share": share}
                    on_done(idx, out)
        except BaseException:
            # Ctrl-C, SIGTERM or a failure of the driver: stop the work in flight. A local Ray of ours goes down
            # with its workers at ray.shutdown (__exit__); force-cancelling its tasks first raced with their
            # completions inside Ray 2.60 (a failed check in its task manager, about one stop in four). On a
            # joined cluster the tasks would run on, so they are cancelled.
            if not self._started:
                for ref in list(pending):
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:  # noqa: BLE001 - best effort while stopping
                        pass
            raise

    def running(self, pending: int) -> int:
        return min(pending, self.slots)


def make_executor(name: str, address: str | None = None, **kw):
    if name == "serial":
        if address:
            raise InputError(f"--address {address!r} needs --executor ray")
        return SerialExecutor()
    if name == "ray":
        return RayExecutor(address=address, **kw)
    raise InputError(f"unknown executor {name!r} (one of {', '.join(EXECUTORS)})")
