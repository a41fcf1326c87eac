"""Sweeps: grids of jobs (collapse, certify, theorems, train) on a serial or a Ray executor.

    from lrnnkit.sweep import run_sweep
    res = run_sweep("examples/sweeps/collapse_small.toml", "sweep_out", executor="ray")
    res["records"][0]["first_wrong_step"]

Modules: :mod:`~lrnnkit.sweep.spec` (TOML spec, grid, hashes, seeds), :mod:`~lrnnkit.sweep.jobs` (job kinds),
:mod:`~lrnnkit.sweep.store` (JSON-lines records, resume), :mod:`~lrnnkit.sweep.executors` (serial, Ray),
:mod:`~lrnnkit.sweep.runner` (:func:`run_sweep`), :mod:`~lrnnkit.sweep.report` (table, heat map),
:mod:`~lrnnkit.cli.sweep` (``lrnnkit sweep``). Ray is optional (``pip install -e '.[ray]'`` in the
checkout).
"""
from .jobs import JOB_KINDS, JobKind
from .runner import run_sweep, strip_meta
from .spec import SweepSpec, load_spec, parse_spec
from .store import RecordStore

__all__ = ["run_sweep", "strip_meta", "SweepSpec", "load_spec", "parse_spec", "RecordStore", "JOB_KINDS", "JobKind"]
