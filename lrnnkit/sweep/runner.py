"""Run a sweep: enumerate the spec's points, skip those already done in the store, run the rest on an executor,
append each record as it finishes, then write the summary (table, plots).

:func:`run_sweep` returns the ``--json`` output of ``lrnnkit sweep`` (docs/cli.rst): ``records`` (one per grid point
that has a record, in grid order), ``done`` (points with an ``ok`` record), ``failed``, ``computed`` (points
computed by this call: 0 on a rerun that found everything done), ``spec_hash``, plus ``total``, ``missing``
(points without a record: only after Ctrl-C), ``oom`` (points out of memory, also counted in ``failed``),
``executor`` and ``out``.

SIGINT, SIGTERM and SIGHUP stop a sweep with :class:`~lrnnkit.errors.Interrupted` and one line saying that every
finished point is in the store (the command line exits 130, 143 or 129); a train point in progress saves its
checkpoint first (:mod:`lrnnkit.learn.train`).

With ``num_gpus = "auto"`` on Ray, the share of a GPU of each point to compute is measured first
(:func:`lrnnkit.sweep.packing.point_shares`: once per distinct model and batch shape, on the driver); the serial
executor runs one point at a time with the whole device and measures nothing.

A point is keyed by its parameters *and* by what its files hold: each record keeps the SHA-256 of the files its
source or task read (:func:`lrnnkit.sweep.jobs.point_inputs`), and an ``ok`` point whose files now hold other
bytes is computed again (one line on stderr says which file changed and how many points it concerns), never
answered from its stale record. The automata and models a previous sweep in this process loaded are forgotten
first (:func:`lrnnkit.sweep.jobs.clear_caches`).

A resumable job (``train``) gets its point's run directory in the store (:meth:`RecordStore.run_dir`): a point cut
short by the end of a run continues, on the next run of the same spec into the same (or a copied) store, from its
last checkpoint there.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

from .executors import make_executor
from . import packing
from .jobs import check_points, clear_caches, expand_grid, get_job, point_inputs, run_seed
from ..fileio import changed_reads
from ..signals import stopping
from .progress import Progress
from .spec import SweepSpec, canonical_json, load_spec, parse_spec
from .store import RecordStore
from ..fileio import exclusive_lock
from .report import write_summary

__all__ = ["run_sweep", "make_record", "strip_meta", "LOCK_FILE"]

LOCK_FILE = ".lock"      # in the output directory: held (flock) while a sweep writes there

META_KEYS = ("status", "error", "seed", "point_key", "spec_hash", "inputs", "meta")


def make_record(spec: SweepSpec, point: dict, seed: int, outcome: dict, executor: str,
                inputs: dict | None = None) -> dict:
    """A flat record: the point's parameters, the result keys (a result key equal to a parameter's name is
    stored as ``result_<key>``), status, error, seed, point_key, spec_hash, inputs (``{absolute path: sha256}`` of
    the files the point read), meta (the job's own meta table, then seconds, executor, pid, finished_at)."""
    rec = dict(point)
    for k, v in outcome["result"].items():
        rec[f"result_{k}" if k in point or k in META_KEYS else k] = v
    rec.update(status=outcome["status"], error=outcome["error"], seed=seed, point_key=spec.point_key(point),
               spec_hash=spec.spec_hash, inputs=dict(inputs or {}),
               meta={**(outcome.get("meta") or {}), "seconds": outcome.get("seconds"), "executor": executor,
                     "pid": outcome.get("pid"), "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return rec


def strip_meta(records) -> list:
    """Records without ``meta`` (timing, pid, executor): what must agree between executors and reruns."""
    return [{k: v for k, v in r.items() if k != "meta"} for r in records]


def _resolve_spec(spec, job_fn) -> SweepSpec:
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, dict):
        return parse_spec(spec, kinds=() if job_fn is not None else None)
    return load_spec(os.fspath(spec), kinds=() if job_fn is not None else None)


def run_sweep(spec, out_dir: str, executor: str = "serial", address: str | None = None, *,
              job_fn: Callable | None = None, progress: bool | None = None, plots: bool = True,
              executor_options: dict | None = None) -> dict:
    """Run ``spec`` (a :class:`SweepSpec`, a parsed TOML dict or a path) into ``out_dir``.

    ``job_fn(point, seed) -> dict`` replaces the built-in job of the spec's kind (custom sweeps; with Ray it is
    shipped to the workers by value when it is not importable). ``executor_options`` go to the executor (Ray:
    ``num_cpus``, ``num_gpus``, ``init_kwargs``, ``window``). Ctrl-C propagates as ``KeyboardInterrupt`` after
    the tasks in flight are stopped; every finished point is already in the store."""
    spec = _resolve_spec(spec, job_fn)
    clear_caches()
    if job_fn is None:
        spec.grid = expand_grid(spec.kind, spec.grid)
    points = spec.points()
    if job_fn is None:
        check_points(spec, points)
    store = RecordStore(out_dir)
    with exclusive_lock(os.path.join(store.out_dir, LOCK_FILE), "sweep output"):
        return _run_locked(spec, points, store, executor, address, job_fn, progress, plots, executor_options)


def _run_locked(spec, points, store, executor, address, job_fn, progress, plots, executor_options) -> dict:
    """run_sweep's work, while this process holds the output directory's lock."""
    store.write_text("spec.json", canonical_json(spec.to_json()) + "\n")
    keys = [spec.point_key(p) for p in points]
    seeds = [run_seed(spec, p) for p in points]
    memo: dict = {}
    inputs = [point_inputs(spec.kind, p, memo) if job_fn is None else {} for p in points]
    done = _still_done(store.load(), keys, inputs)
    resumable = job_fn is None and get_job(spec.kind).resumable
    todo = [(i, points[i], seeds[i], store.run_dir(keys[i]) if resumable else None)
            for i in range(len(points)) if keys[i] not in done]
    already = len(points) - len(todo)
    ex = make_executor(executor, address, **(executor_options or {}))
    shares = None
    if spec.num_gpus == "auto" and ex.name == "ray":
        shares = packing.point_shares(spec, {t[0]: t[1] for t in todo})
    bar = Progress(len(points), already, progress)
    started: set = set()
    computed = 0

    def on_start(i):
        started.add(i)
        bar.update(None, running=min(len(started), getattr(ex, "slots", 1)))

    def on_done(i, outcome):
        nonlocal computed
        store.append(make_record(spec, points[i], seeds[i], outcome, ex.name, inputs[i]))
        computed += 1
        started.discard(i)
        bar.update(outcome["status"], running=min(len(started), getattr(ex, "slots", 1)))

    try:
        with ex, stopping(f"lrnnkit: sweep stopped by {{signal}}; every finished point is in {store.path!r} (rerun "
                          "the same command to go on)"):
            ex.run(todo, job_fn, spec, on_done, on_start, shares=shares)
    finally:
        bar.close()
    recs = store.load()
    records = [recs[k] for k in keys if k in recs]
    res = {"records": records, "done": sum(r["status"] == "ok" for r in records),
           "failed": sum(r["status"] != "ok" for r in records), "oom": sum(r["status"] == "oom" for r in records),
           "computed": computed,
           "spec_hash": spec.spec_hash, "total": len(points), "missing": len(points) - len(records),
           "executor": ex.name, "kind": spec.kind, "out": store.out_dir}
    res["summary_files"] = write_summary(store, spec, records, plots=plots)
    on_disk = {k: v for k, v in res.items() if k != "records"}    # paths relative to the store: it stays portable
    on_disk.update(out=".", summary_files=[os.path.relpath(f, store.out_dir) for f in res["summary_files"]])
    store.write_text("summary.json", canonical_json(on_disk) + "\n")
    return res


def _still_done(recs: dict, keys: list, inputs: list) -> set:
    """The keys of points with an ``ok`` record made from the files' present contents; the others are computed
    again, and one line on stderr names the first changed file and how many points it concerns."""
    done, stale, why = set(), 0, None
    for k, now in zip(keys, inputs):
        r = recs.get(k)
        if r is None or r.get("status") != "ok" or k in done:
            continue
        then = r.get("inputs")
        if not (isinstance(then, dict) and all(isinstance(v, str) for v in then.values())):
            then = {}       # a record written before inputs were recorded: computed again where files are read
        changed = changed_reads(then, now)
        if changed is None:
            done.add(k)
        else:
            stale, why = stale + 1, why or changed
    if stale:
        print(f"lrnnkit: sweep: {stale} finished point{'s' if stale != 1 else ''} computed again: {why}",
              file=sys.stderr)
    return done


def check_spec_file(path: str) -> SweepSpec:
    """Load and validate a spec file and every point of it (no job runs)."""
    spec = load_spec(path)
    spec.grid = expand_grid(spec.kind, spec.grid)
    check_points(spec, spec.points())
    return spec
