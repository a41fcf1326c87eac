"""Job kinds of a sweep: what one grid point computes.

Each kind is a :class:`JobKind` with the parameters it accepts (``required`` / ``optional`` with defaults), a
cheap ``check`` run on every point before anything is launched (a bad spec fails at once, on one line), and
``run(point, seed) -> dict`` returning JSON-able result keys. ``seed`` is the point's seed
(:meth:`lrnnkit.sweep.spec.SweepSpec.point_seed`): a function of the spec and the point only.

Every kind also accepts ``replicate`` (an integer that only changes the point's seed: repeated random runs).

* ``collapse``: compile ``source`` (with ``construction``, default the best applicable one) and find the first
  step at which it goes wrong in ``format`` under cast ``policy`` on a seeded random word of ``steps`` symbols
  (one-letter alphabets: the periodic word, exact for all lengths) -- :func:`lrnnkit.precision.collapse`
  (paper 000, Theorems 1-2 are what makes such steps exist for non-trivial constructions).
* ``certify``: compile and certify for all input lengths (exact BFS, docs/algorithms.rst "Certification").
  ``source`` may also be ``random:N:K``: a uniformly random complete automaton with N states and K letters drawn
  from the point's seed (accepting set uniform too), for "certify every random automaton" grids.
* ``theorems``: re-run one statement's check (``id``; ``"all"`` in the grid expands to every registered id) with
  ``profile`` quick or deep and compare its derived verdict with the recorded one.
* ``train``: a training run of :mod:`lrnnkit.learn` (``train(TrainConfig(**params), run_dir)``, imported on first
  use, on the GPU when the task has one); the point's parameters are passed through, with ``seed`` = the point's
  ``seed`` parameter when the grid gives one, else the derived seed. It is *resumable*: it checkpoints into the
  point's run directory (``OUT/runs/<point_key>``, at the train module's cadence and whenever it is stopped) and a
  rerun of a point cut short continues from the last checkpoint there, to the same result an uninterrupted run
  gives (:mod:`lrnnkit.learn.train`: bit-identical on the same device and library versions).

**Keyed by content.** A point's record holds ``inputs``: the absolute path and SHA-256 of every file its ``source``
(collapse, certify) or ``task`` (train) read (:func:`point_inputs`). A rerun recomputes an ``ok`` point whose files
now hold other bytes (:mod:`.runner`), and a train point whose run directory's checkpoint was made from other
contents starts afresh instead of resuming it.

A resumable kind's ``run`` is called as ``run(point, seed, run_dir)``. A job may return, under the key
:data:`RESULT_META`, a table for the record's ``meta`` (what may differ between reruns: the train job's
``resumed_from_step``, 0 for a run started afresh).
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError
from ..fileio import changed_reads, recording_reads
from ..automata.fsa import FSA
from ..automata.sources import load_source
from ..learn.tasks import make_task
from ..certify import DEFAULT_FLOAT_STEPS, DEFAULT_MAX_PAIRS, certify
from ..constructions import compile as compile_model
from ..errors import SizeLimitError
from .. import limits
from ..limits import check_automaton
from ..precision import canonical_policy, canonical_rounding, collapse, get_format
from ..theorems import all_statements, get, run_check

__all__ = ["JobKind", "JOB_KINDS", "RESULT_META", "get_job", "check_points", "expand_grid", "jsonable", "run_seed",
           "point_inputs", "clear_caches"]

RESULT_META = "_meta"     # a result key whose table goes to the record's meta
COLLAPSE_STEPS = 10_000   # a collapse point's word length when the spec gives no steps


@dataclass
class JobKind:
    name: str
    run: Callable                       # run(point: dict, seed: int[, run_dir: str]) -> dict
    required: tuple = ()
    optional: dict = field(default_factory=dict)   # name -> default
    open_params: bool = False           # accept parameters it does not list (train: passed through)
    seed_param: str | None = None       # a point's parameter that, when given, is the seed the job runs with
    uses_gpu: bool = False
    resumable: bool = False             # run(point, seed, run_dir): keeps its state in the point's run directory
    check: Callable | None = None       # check(point) -> None, raises InputError
    input_param: str | None = None      # the parameter naming what the job reads: a SOURCE or a task name

    def validate(self, point: dict, where: str) -> None:
        missing = [k for k in self.required if k not in point]
        if missing:
            raise InputError(f"{where}: the {self.name} job needs parameter(s) {', '.join(missing)} "
                             f"(in [params] or [grid])")
        if not self.open_params:
            allowed = set(self.required) | set(self.optional) | {"replicate"}
            bad = sorted(set(point) - allowed)
            if bad:
                raise InputError(f"{where}: unknown parameter(s) {', '.join(bad)} for the {self.name} job "
                                 f"(allowed: {', '.join(sorted(allowed))})")
        _spec_int(point, "replicate", where, 0, limits.MAX_SEED, "MAX_SEED")
        if self.check is not None:
            self.check(point, where)


def jsonable(obj):
    """Plain JSON data from results (numpy scalars and arrays, tuples, non-finite floats as strings)."""
    import numpy as np
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else repr(x)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if hasattr(obj, "to_json"):
        return jsonable(obj.to_json())
    return str(obj)


# --------------------------------------------------------------------------- shared helpers
def _spec_int(point, key, where, lo=1, hi=None, const=""):
    """``point[key]``, when given, must be an integer in [lo, hi]: the command line's range check
    (:func:`lrnnkit.limits.check_int`) applied to a spec value."""
    if point.get(key) is not None:
        limits.check_int(f"{where}: {key!r}", point[key], lo, hi, const)


@functools.lru_cache(maxsize=256)
def _check_source(source: str) -> None:
    """A point's ``source`` is within the size limits of its preset or file and of ``compile`` (checked once per
    source, before the sweep starts). Other defects of a source (an unknown group name) make that point a failed
    record, as when the job runs, and the other points go on."""
    try:
        fsa = _load(source, 0)
    except SizeLimitError:
        raise
    except InputError:
        return
    check_automaton(fsa, "compile", source)


def _checked_source(point, where):
    src = point["source"]
    if not isinstance(src, str) or not src:
        raise InputError(f"{where}: 'source' must be a non-empty string, got {src!r}")
    try:
        _check_source(src)
    except InputError as exc:
        raise type(exc)(f"{where}: {exc}") from None


def _random_fsa(spec: str, seed: int):
    """``random:N:K``: a uniformly random complete DFA (N states, K letters ``a0..``, start 0, accepting set
    uniform over subsets) drawn from ``seed``."""
    import numpy as np
    parts = spec.split(":")
    try:
        n, k = int(parts[1]), int(parts[2])
        if len(parts) != 3 or not (1 <= n <= 64 and 1 <= k <= 16):
            raise ValueError
    except (ValueError, IndexError):
        raise InputError(f"bad random source {spec!r}: use random:N:K with 1 <= N <= 64 states, 1 <= K <= 16 letters"
                         ) from None
    rng = np.random.default_rng(seed)
    delta = rng.integers(0, n, size=(n, k))
    acc = frozenset(int(q) for q in np.flatnonzero(rng.integers(0, 2, size=n)))
    return FSA(alphabet=tuple(f"a{i}" for i in range(k)), delta=delta, start=0, accepting=acc,
               name=f"{spec}#{seed:08x}")


def _load(source: str, seed: int):
    if not isinstance(source, str) or not source:
        raise InputError(f"'source' must be a non-empty string, got {source!r}")
    if source.startswith("random:"):
        return _random_fsa(source, seed)
    return load_source(source)


@functools.lru_cache(maxsize=64)
def _compiled(source: str, construction, options_json: str, seed: int):
    """Compile once per worker process and (source, construction, options) (random sources: per seed)."""
    fsa = _load(source, seed)
    check_automaton(fsa, "compile", source)
    return compile_model(fsa, construction, **json.loads(options_json))


def _model_for(point: dict, seed: int):
    src = point["source"]
    options = point.get("options", {}) or {}
    if not isinstance(options, dict):
        raise InputError(f"'options' must be a table of construction options, got {options!r}")
    return _compiled(src, point.get("construction"), json.dumps(options, sort_keys=True),
                     seed if src.startswith("random:") else 0)


def clear_caches() -> None:
    """Forget the automata and models loaded so far (a new sweep reads its files again: one edited since the last
    sweep in this process is not answered from memory)."""
    _check_source.cache_clear()
    _compiled.cache_clear()


def _task_inputs(name: str) -> dict:
    return make_task(name).inputs


def point_inputs(kind: str, point: dict, memo: dict | None = None) -> dict:
    """``{absolute path: sha256}`` of the files the point's job reads as its source or task (read now, as the job
    will: :func:`lrnnkit.fileio.recording_reads`); ``{}`` for presets, ``random:`` sources and kinds that read no
    file, and whatever was read before the error for a source that cannot be loaded (its job then fails and says
    why). ``memo`` (``{(param, value): inputs}``) reads each distinct source once per sweep."""
    job = JOB_KINDS.get(kind)
    name = job.input_param if job is not None else None
    v = point.get(name) if name else None
    if not isinstance(v, str) or not v or v.startswith("random:"):
        return {}
    memo = {} if memo is None else memo
    if (name, v) not in memo:
        with recording_reads() as seen:
            try:
                _task_inputs(v) if name == "task" else load_source(v)
            except InputError:
                pass
        memo[(name, v)] = dict(seen)
    return dict(memo[(name, v)])


# --------------------------------------------------------------------------- collapse
def _check_collapse(point, where):
    _spec_int(point, "steps", where, 1, limits.COLLAPSE_MAX_STEPS, "COLLAPSE_MAX_STEPS")
    _spec_int(point, "period_cap", where, 1, limits.COLLAPSE_MAX_STEPS, "COLLAPSE_MAX_STEPS")
    for key in ("renorm", "decoder_fp64"):     # "false" (a string) would be true: booleans only
        if key in point and not isinstance(point[key], bool):
            raise InputError(f"{where}: {key!r} must be true or false, got {point[key]!r}"[:300])
    _checked_source(point, where)
    try:
        get_format(point["format"])
        canonical_policy(point.get("policy", "matvec"))
        canonical_rounding(point.get("rounding", "nearest-even"))
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def run_collapse(point: dict, seed: int) -> dict:
    """First wrong step of the compiled model in a float format (:func:`lrnnkit.precision.collapse`). One-letter
    alphabets: the periodic word, exact for all lengths when the run's period shows within ``period_cap`` (default
    ``steps``; :func:`~lrnnkit.precision.collapse` itself bounds the search by ``steps`` and otherwise checks the
    word of ``steps`` letters)."""
    model = _model_for(point, seed)
    steps = point.get("steps", COLLAPSE_STEPS)
    kw = {k: point[k] for k in ("gh", "renorm", "decoder_fp64", "period_cap") if point.get(k) is not None}
    c = collapse(model, point["format"], point.get("policy", "matvec"), steps, point.get("rounding", "nearest-even"),
                 seed=seed, **kw)
    return {"first_wrong_step": c.first_wrong_step, "exact_for_all_lengths": c.exact_for_all_lengths,
            "model_construction": model.provenance.get("construction"), "format_label": c.format,
            "steps_run": c.steps, "input": c.input, "pre_period": c.pre_period, "period": c.period}


# --------------------------------------------------------------------------- certify
def _check_certify(point, where):
    _spec_int(point, "max_pairs", where, 1, limits.MAX_PAIRS_LIMIT, "MAX_PAIRS_LIMIT")
    _spec_int(point, "float_steps", where, 0, limits.FLOAT_CHECK_MAX_STEPS, "FLOAT_CHECK_MAX_STEPS")
    _checked_source(point, where)


def run_certify(point: dict, seed: int) -> dict:
    """Certify the compiled model for inputs of every length (:func:`lrnnkit.certify`)."""
    model = _model_for(point, seed)
    fsa = _load(point["source"], seed)
    cert = certify(model, fsa, max_pairs=point.get("max_pairs", DEFAULT_MAX_PAIRS),
                   float_steps=point.get("float_steps", DEFAULT_FLOAT_STEPS), seed=seed)
    j = cert.to_json()
    keep = ("certified", "method", "reason", "reachable_states", "explored_transitions", "layers", "widths",
            "max_factors_per_token", "counterexample", "float_check")
    out = {k: j.get(k) for k in keep}
    out["model_construction"] = model.provenance.get("construction")
    out["automaton_states"] = fsa.n_states
    return out


# --------------------------------------------------------------------------- theorems
def _check_theorems(point, where):
    if point.get("profile", "quick") not in ("quick", "deep"):
        raise InputError(f"{where}: 'profile' must be quick or deep, got {point.get('profile')!r}")
    try:
        get(point["id"])
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def run_theorems(point: dict, seed: int) -> dict:
    """Re-derive one statement's verdict (:func:`lrnnkit.theorems.run_check`; checks are derandomized)."""
    s = get(point["id"])
    r = run_check(point["id"], point.get("profile", "quick"))
    return {"verdict": r.verdict, "recorded_verdict": s.verdict, "agrees": r.verdict == s.verdict,
            "evidence": r.evidence, "counterexample": r.counterexample, "corrected": r.corrected}


def _expand_theorem_ids(grid: dict) -> dict:
    ids = grid.get("id")
    if isinstance(ids, list) and "all" in ids:
        every = [s.id for s in all_statements()]
        new = []
        for v in ids:
            for x in (every if v == "all" else [v]):
                if x not in new:
                    new.append(x)
        grid = dict(grid)
        grid["id"] = new
    return grid


# --------------------------------------------------------------------------- train
def train_function() -> Callable:
    """The train job's entry point ``f(params, out=None)``: :func:`lrnnkit.learn.train.train` on
    ``TrainConfig(**params)``, checkpointing into and resuming from the run directory ``out`` when given (imported
    on first use: the sweep does not load torch for the other job kinds)."""
    from ..learn.train import TrainConfig, train

    def train_from_config(params: dict, out: str | None = None, resume: bool = True) -> dict:
        params = dict(params)
        if "device" not in params:   # a GPU when this task was given one (Ray sets CUDA_VISIBLE_DEVICES)
            import torch
            params["device"] = "cuda" if torch.cuda.is_available() else "cpu"
        return train(TrainConfig(**params), out, resume=resume)
    train_from_config.config_fields = tuple(f.name for f in dataclasses.fields(TrainConfig))
    return train_from_config


def _check_train(point, where):
    """Unknown fields, then the command line's limits (TrainConfig's checks and the model's parameter count)."""
    from ..learn.train import TrainConfig
    fields = train_function().config_fields
    bad = sorted(set(point) - set(fields) - {"replicate"})
    if bad:
        raise InputError(f"{where}: unknown parameter(s) {', '.join(bad)} for the train job (TrainConfig "
                         f"fields: {', '.join(fields)})")
    try:
        TrainConfig(**{k: v for k, v in point.items() if k != "replicate"}).check_size()
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _checkpoint_step(run_dir: str) -> int | None:
    """The step of the checkpoint a training run in ``run_dir`` resumes from (the one
    :func:`lrnnkit.learn.checkpoint.find` picks, as the run does); 0 when there is none or it is unusable (the run
    itself then starts afresh or reports why); None when it was made from other contents of the task's files than
    they hold now (the run then starts afresh: the point is recomputed)."""
    from ..learn import checkpoint as ck
    from ..learn.train import TrainConfig
    try:
        found = ck.find(run_dir, TrainConfig.from_json)
    except InputError:
        return 0
    if found is None:
        return 0
    doc = found[0]
    try:
        if "inputs" in doc and changed_reads(doc["inputs"], _task_inputs(doc["config"]["task"])) is not None:
            return None
    except InputError:
        return 0
    return int(doc["step"])


def run_train(point: dict, seed: int, run_dir: str | None = None) -> dict:
    """One training run (:mod:`lrnnkit.learn`), checkpointed in ``run_dir`` and resumed from it when it holds a
    checkpoint made from the task files' present contents (else started afresh); keys starting with ``_`` (the
    model object) and the checkpoint path are dropped from the record, which is therefore the same wherever the run
    directory is and however often the run was resumed. With a run directory, :data:`RESULT_META` gives
    ``resumed_from_step``."""
    params = {k: v for k, v in point.items() if k != "replicate"}
    params.setdefault("seed", seed)
    resumed = _checkpoint_step(run_dir) if run_dir else None
    res = train_function()(params, run_dir, resume=resumed is not None)
    out = {k: v for k, v in res.items() if not k.startswith("_") and k != "checkpoint"}
    if run_dir:
        out[RESULT_META] = {"resumed_from_step": resumed or 0}
    return out


JOB_KINDS = {
    "collapse": JobKind("collapse", run_collapse, required=("source", "format"),
                        optional={"policy": "matvec", "steps": COLLAPSE_STEPS, "rounding": "nearest-even",
                                  "construction": None, "options": {}, "gh": "factors", "renorm": False,
                                  "decoder_fp64": False, "period_cap": None},
                        check=_check_collapse, input_param="source"),
    "certify": JobKind("certify", run_certify, required=("source",),
                       optional={"construction": None, "options": {}, "max_pairs": DEFAULT_MAX_PAIRS, "float_steps": DEFAULT_FLOAT_STEPS},
                       check=_check_certify, input_param="source"),
    "theorems": JobKind("theorems", run_theorems, required=("id",), optional={"profile": "quick"},
                        check=_check_theorems),
    "train": JobKind("train", run_train, open_params=True, uses_gpu=True, resumable=True, check=_check_train,
                     seed_param="seed", input_param="task"),
}


def run_seed(spec, point: dict) -> int:
    """The seed a point runs with (and its record reports): the point's own seed parameter where its kind takes
    one (``train``: ``seed`` in the grid), else the spec's derived seed (:meth:`SweepSpec.point_seed`)."""
    job = JOB_KINDS.get(spec.kind)
    v = point.get(job.seed_param) if job is not None and job.seed_param else None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return spec.point_seed(point)


def get_job(kind: str) -> JobKind:
    if kind not in JOB_KINDS:
        raise InputError(f"unknown sweep kind {kind!r} (one of {', '.join(JOB_KINDS)})")
    return JOB_KINDS[kind]


def expand_grid(kind: str, grid: dict) -> dict:
    """Grid shorthands of a kind (theorems: ``id = ["all"]``)."""
    return _expand_theorem_ids(grid) if kind == "theorems" else grid


def check_points(spec, points) -> None:
    """Validate every point of ``spec`` against its kind (raises :class:`InputError` on the first bad one)."""
    job = get_job(spec.kind)
    for p in points:
        job.validate(p, f"sweep spec {spec.source!r}, point {json.dumps(p, sort_keys=True)}")
