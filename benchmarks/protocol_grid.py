"""The papers' learning experiments at their own protocols (``bench_learning.py --scale paper --protocol``): each
experiment's paper runs expanded by :func:`lrnnkit.learn.protocols.follow` to the paper's seeds x learning rates,
each shape group trained as ONE batched job (:func:`lrnnkit.learn.batched.train_batched`) where
:func:`lrnnkit.learn.batched.check_runs` accepts it, else its runs one by one; one job per GPU, longest first.

Every run writes ``runs/<experiment>/<slug>.json`` in the format ``--summarise`` / ``--record`` read, its label
``"<configuration> (lr L, seed S)"`` and ``config_label`` the configuration (so the registry's
``best_per_config`` groups the seeds of one configuration), and its run directory ``rundirs/<experiment>/<slug>``
(checkpoints, ``metrics.jsonl``).

Across device calls (a 10-minute limit per call): run with ``--out $OUT/grid`` and ``--safety-cap`` under the call's
limit; the run directories come back under ``$OUT`` and are carried into the next call (``carry``, 64 MiB in all:
the size of ``rundirs`` is printed at the end); copying them to the next call's ``--out`` makes a job whose run
directories hold checkpoints of one step continue from them (``train_batched``'s resume), not restart.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COSTS = os.path.join(HERE, "results", "paper_scale", "cost_h200_loops.json")
PROTOCOL_COSTS = os.path.join(HERE, "results", "paper_scale", "cost_h200_protocol.json")
SPEEDUPS = os.path.join(HERE, "results", "batched_runs", "h200.json")


def protocol_jobs(names, device: str = "cuda", seeds=None, lrs=None) -> list:
    """``[{"experiment", "label", "batched", "runs": [{"label", "config_label", "config"}]}]``: per experiment, per
    shape group of its protocol runs (:func:`lrnnkit.learn.protocols.follow`, at ``seeds`` and ``lrs`` where given;
    :func:`lrnnkit.learn.protocols._groups`) one job, batched when :func:`lrnnkit.learn.batched.check_runs` accepts
    its runs (:func:`_batchable`)."""
    import dataclasses

    from lrnnkit.learn.protocols import _groups, follow
    from lrnnkit.run_records import run_key
    jobs = []
    for name in names:
        for label, cfgs in _groups(follow(name, seeds=seeds, lrs=lrs)):
            runs = [{"label": run_key(label, c.lr, c.seed), "config_label": label,
                     "config": dataclasses.replace(c, device=device).to_json()} for c in cfgs]
            jobs.append({"experiment": name, "label": label, "runs": runs, "batched": _batchable(cfgs)})
    return jobs


def _batchable(cfgs) -> bool:
    """Whether :func:`lrnnkit.learn.batched.check_runs` accepts the runs as one batched model (its rules, not a copy:
    the layer, one shape, no auto_steps, the device loop, the token limit of one step)."""
    from lrnnkit.errors import InputError, SizeLimitError
    from lrnnkit.learn.batched import check_runs
    try:
        check_runs(cfgs)
    except (InputError, SizeLimitError):
        return False
    return True


def _speedup(rows: list, runs: int) -> float:
    """The measured runs x steps/s of ``runs`` batched over one run alone (the nearest measured R not above it)."""
    got = [(r["runs"], r["speedup_vs_alone"]) for r in rows if str(r.get("mode", "")).startswith("batched")]
    got = [g for g in got if g[0] <= runs]
    return max(got)[1] if got else 1.0


#: the fields of a cost row (``paper_scale_cost.py``) that a job's configuration must share for the row's ms/step
#: to price it: the experiment's own ``--scale paper`` runs and its protocol's can differ (004's diagonal parity
#: runs follow 000's Fig. 1: batch 1024 at lengths 3-40, where 004's own are batch 64 at 2-10)
SHAPE_FIELDS = ("layer", "batch", "width", "layers", "train_len")


def same_shape(row: dict, config: dict) -> bool:
    """Whether cost ``row`` was timed at ``config``'s shape (:data:`SHAPE_FIELDS`; a field the row does not record
    is not compared)."""
    def norm(v):
        return list(v) if isinstance(v, (list, tuple)) else v
    return all(norm(row[k]) == norm(config.get(k)) for k in SHAPE_FIELDS if k in row)


def estimate_minutes(job: dict, costs: dict, speedups: dict) -> float | None:
    """Device minutes of ``job``: R runs x steps x the device loop's ms/step of its configuration
    (``cost_h200_loops.json``, a row of the same label and shape, :func:`same_shape`; None where none is recorded),
    divided by the batched speed-up measured for the experiment's
    shape (``batched_runs/h200.json``, rows ``shape`` = ``<experiment suffix>-<layer>``; none: 1.0). A fixed-point
    run whose training cap is not the one its row was timed at (the row's ``fp_train_iters``; rows without one were
    timed at the default, 16, while 003's copy and modular arithmetic follow the paper's 100) is scaled by the
    iterations its sync-free step runs, ``(cap - 1) / (row cap - 1)``: an upper bound, not a measurement. A row whose
    ``batched`` entry timed the job's own R runs as one model (``bench_scans.py``) prices a batched job by that step
    alone."""
    exp = costs.get("experiments", {}).get(job["experiment"], {})
    c = job["runs"][0]["config"]
    row = next((r for r in exp.get("rows", []) if r.get("label") == job["label"] and same_shape(r, c)), None)
    if row is None:
        return None
    batched = row.get("batched") or {}
    if job["batched"] and batched.get("runs") == len(job["runs"]):     # the whole batched job's step, measured
        return c["steps"] * batched["ms_per_step"] / 60000.0
    total = len(job["runs"]) * c["steps"] * row["ms_per_step"] / 60000.0
    if c.get("layer") == "fixed-point":     # the sync-free step runs cap - 1 iterations: scaled from the cap the
        from lrnnkit.layers.fixed_point import FixedPointMixer      # row was timed at (a row without one: the default)
        default = FixedPointMixer.TRAIN_MAX_ITERS
        total *= (c.get("fp_train_iters", default) - 1) / (row.get("fp_train_iters", default) - 1)
    if job["batched"]:
        shape = job["experiment"].split("-", 1)[-1] + "-" + c["layer"]
        rows = [r for r in speedups.get("rows", []) if r.get("shape") == shape]
        total /= _speedup(rows, len(job["runs"]))
    return total


def plan(jobs, gpus: int, costs: dict, speedups: dict, order: str = "long") -> list:
    """Jobs longest first (``order="short"``: shortest first, so that more jobs finish inside a call), each to the
    GPU with the least work so far: ``[(gpu, minutes or None, job)]`` (a job of no recorded cost counts 0 and goes
    last)."""
    if order not in ("long", "short"):
        raise ValueError(f"order must be 'long' or 'short', not {order!r}")
    sign = -1.0 if order == "long" else 1.0
    load = [0.0] * gpus
    out = []
    est = [(estimate_minutes(j, costs, speedups), j) for j in jobs]
    for m, j in sorted(est, key=lambda x: (x[0] is None, sign * (x[0] or 0.0))):
        g = load.index(min(load))
        load[g] += m or 0.0
        out.append((g, m, j))
    return out


def split_one_by_one(jobs) -> list:
    """Each job that is not batched split into one job per run (same experiment and configuration label, so its
    cost is looked up as before): packed processes on one GPU (:func:`run_protocol`'s ``per_gpu``) then train a
    configuration's seeds side by side instead of in turn. Batched jobs are kept whole."""
    out = []
    for j in jobs:
        if j["batched"] or len(j["runs"]) == 1:
            out.append(j)
        else:
            out += [{**j, "runs": [r]} for r in j["runs"]]
    return out


def split_batched(jobs, parts: int) -> list:
    """Each batched job of R runs split into ``min(parts, R)`` batched jobs of nearly equal runs (in order; a part of
    one run stays a batched job of one run: the same loop and code as in the whole batch), so that the parts go to
    different cards and each can finish inside one call, with no run directories carried between calls. Each run
    trains as it would in the whole batch (:func:`lrnnkit.learn.batched.difference_from_separate`: a run of a
    batched model is the run alone) and resumes from its checkpoints whatever part it lands in, as long as the
    runs of one part hold checkpoints of one step. Jobs that are not batched are kept. The price: the batched
    speed-up of the whole job (``batched_runs/h200.json``: 1.0-1.6x at 4-8 runs) is given up in part."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, not {parts}")
    out = []
    for j in jobs:
        runs = j["runs"]
        k = min(parts, len(runs))
        if not j["batched"] or k == 1:
            out.append(j)
            continue
        size, extra = divmod(len(runs), k)
        start = 0
        for i in range(k):
            n = size + (i < extra)
            out.append({**j, "runs": runs[start:start + n]})
            start += n
    return out


def _load(path: str) -> dict:
    with open(path) as fh:
        return json.load(fh)


LEARNING = os.path.join(HERE, "results", "learning")


def measured_costs(costs: dict, learning_dir: str = LEARNING) -> dict:
    """``costs`` (the ``cost_h200_loops.json`` table) with each configuration's ms/step replaced by what its runs
    took where a committed paper-scale results file (``<experiment>-paper.json``) holds runs of it that trained all
    their configured steps (the mean of their ``ms_per_step``): a whole run's rate, evaluation aside, over the
    table's few timed steps. The rows so replaced say ``measured_in_runs``."""
    import copy
    import glob
    out = copy.deepcopy(costs)
    for path in sorted(glob.glob(os.path.join(learning_dir, "*-paper.json"))):
        rec = _load(path)
        exp = (out.get("experiments") or {}).get(rec.get("name"))
        if not exp or rec.get("scale") != "paper":
            continue
        seen: dict = {}
        for label, r in (rec.get("runs") or {}).items():
            cfg = r.get("config") if isinstance(r.get("config"), dict) else {}
            if r.get("ms_per_step") and r.get("steps") == cfg.get("steps"):
                seen.setdefault(r.get("config_label", label), []).append((float(r["ms_per_step"]), cfg))
        for row in exp.get("rows", []):
            ms = [m for m, cfg in seen.get(row.get("label"), []) if same_shape(row, cfg)]
            if ms:
                row["ms_per_step"], row["measured_in_runs"] = sum(ms) / len(ms), len(ms)
    return out


def load_costs(path: str = COSTS, protocol_path: str = PROTOCOL_COSTS) -> dict:
    """The cost table (``cost_h200_loops.json``: each experiment's ``--scale paper`` configurations) with the rows
    of ``cost_h200_protocol.json`` added (``paper_scale_cost.py --protocol``: configurations whose protocol shape is
    not the experiment's own, e.g. 004's diagonal parity runs at 000's batch and lengths, or 003's copy at the
    paper's fixed-point cap), put first: :func:`estimate_minutes` takes the first row of a job's label and shape
    (:func:`same_shape`)."""
    costs = _load(path)
    if os.path.exists(protocol_path):
        for name, e in (_load(protocol_path).get("experiments") or {}).items():
            rows = [r for r in e.get("rows", []) if "error" not in r]
            exp = costs.setdefault("experiments", {}).setdefault(name, {"rows": []})
            exp["rows"] = rows + exp.get("rows", [])      # first: a job takes the first row of its label and shape
    return costs


#: what a device call carries in (run directories, wheels and the working tree together: the device tool's limit)
CARRY_BYTES = 64 * 2 ** 20


def checkpoint_bytes(job: dict) -> int:
    """What ``job``'s run directories must carry to resume on another machine: per run, the tensor file of one
    checkpoint (:func:`lrnnkit.learn.checkpoint.state_bytes`: parameters, AdamW's two moments, headers; the model
    built on the meta device, no memory), times its runs (a batched job checkpoints every run)."""
    import torch

    from lrnnkit.learn.checkpoint import state_bytes
    from lrnnkit.learn.models import SequenceModel
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import TrainConfig
    cfg = TrainConfig.from_json(job["runs"][0]["config"])
    with torch.device("meta"):
        model = SequenceModel(**cfg.model_kwargs(make_task(cfg.task)))
    return len(job["runs"]) * state_bytes(model)


def _carry_note(job: dict) -> str:
    """The dry run's word on a job's checkpoints: their size, and where they are over :data:`CARRY_BYTES` that the
    job resumes only on the machine that trained it (a warm one, through protocol_call.sh's ``KEEP``) or must
    finish inside one call."""
    n = checkpoint_bytes(job)
    note = f", checkpoints {n / 2 ** 20:.0f} MiB"
    if n > CARRY_BYTES:
        note += (f" (over the {CARRY_BYTES >> 20} MiB a call carries: finish in one call or resume on the same warm "
                 "machine, KEEP)")
    return note


def dry_run(jobs, gpus: int, costs=None, speedups=None, order: str = "long", per_gpu: int = 1,
            out: str | None = None) -> str:
    """The table of :func:`plan` and each worker's total minutes (one worker per GPU; ``per_gpu`` > 1: that many per
    GPU, the one-by-one jobs split as :func:`run_protocol` splits them, each worker's minutes as if alone). With
    ``out`` (the grid's folder, holding carried run directories), a job whose runs already trained some steps
    shows the step its checkpoints reached and the minutes left (its minutes x the steps left / steps), and the
    totals count what is left. Each line gives the size of the job's checkpoints (:func:`_carry_note`)."""
    costs = measured_costs(load_costs()) if costs is None else costs
    speedups = _load(SPEEDUPS) if speedups is None else speedups
    if per_gpu > 1:
        jobs = split_one_by_one(jobs)
    workers = gpus * per_gpu
    name = (lambda w: f"gpu {w}") if per_gpu == 1 else (lambda w: f"worker {w} gpu {w % gpus}")
    lines, tot = [], [0.0] * workers
    for g, m, j in plan(jobs, workers, costs, speedups, order):
        steps = j["runs"][0]["config"]["steps"]
        done = min(_steps_done(out, j), steps) if out else 0
        left = None if m is None else m * (steps - done) / steps
        tot[g] += left or 0.0
        lines.append(f"{name(g)}  {j['experiment']:18} {j['label'][:40]:40} {len(j['runs']):3} runs "
                     f"{'batched' if j['batched'] else 'one by one':10} {steps:7} steps "
                     + (f"{m:8.1f} min" if m is not None else "  no cost recorded")
                     + (f", at step {done}: {left:.1f} min left" if done and left is not None else
                        f", at step {done}" if done else "") + _carry_note(j))
    lines += [f"{name(g)} total {t:.1f} min" for g, t in enumerate(tot)]
    if per_gpu > 1:
        lines += [f"gpu {c} total {sum(tot[c::gpus]):.1f} min of its workers' jobs one after another"
                  for c in range(gpus)]
        lines.append(PER_GPU_CAVEAT)
    return "\n".join(lines)


#: what ``per_gpu`` > 1 buys: the workers' minutes above are each job's as if alone on the card
PER_GPU_CAVEAT = ("per GPU: each worker's minutes assume its jobs step as fast as alone; jobs that fill the card do "
                  "not (benchmarks/RESULTS.md, 'learning at paper scale': two batched jobs on one card), so for them "
                  "the card's total, not its slowest worker, is the wall time")


def _slug(s: str) -> str:
    from lrnnkit.learn.experiments import _slug as slug
    return slug(s)


def _record_path(out: str, experiment: str, label: str) -> str:
    """Where bench_learning.py's grid writes the record of one run (its ``_record_path``: --summarise reads it)."""
    from benchmarks.bench_learning import _record_path as record_path
    return record_path(out, {"experiment": experiment, "label": label})


def _elapsed(run_dir: str) -> float:
    """The training seconds of a run directory's checkpoint (0 without one)."""
    from lrnnkit.learn import checkpoint as ck
    p = os.path.join(run_dir, ck.CKPT_JSON)
    return float(_load(p).get("elapsed", 0.0)) if os.path.exists(p) else 0.0


def _steps_done(out: str, job: dict) -> int:
    """The fewest steps any of ``job``'s runs' checkpoints under ``out`` holds (0 where one has none): where the job
    resumes (a batched job's runs checkpoint together)."""
    from lrnnkit.learn import checkpoint as ck
    steps = []
    for d in _run_dirs(out, job):
        p = os.path.join(d, ck.CKPT_JSON)
        steps.append(int(_load(p).get("step", 0)) if os.path.exists(p) else 0)
    return min(steps) if steps else 0


def _finished(out: str, experiment: str, run: dict) -> bool:
    """Whether the run's record file says it trained all its steps (then its job is not run again)."""
    p = _record_path(out, experiment, run["label"])
    if not os.path.exists(p):
        return False
    rec = _load(p)
    return rec.get("status") == "ok" and rec["result"].get("steps") == run["config"]["steps"]


def run_protocol_job(job: dict, out: str, safety_cap: float | None = None) -> list:
    """Train one job (batched or one by one), each run resuming from its directory's checkpoints, and write each
    run's record file (overwritten by each call: the latest, with the most steps, speaks). ``safety_cap``: this
    call's seconds, added to the seconds the checkpoints already hold. A job whose runs all finished is skipped.
    Returns the records written."""
    import time

    from lrnnkit.learn.batched import train_batched
    from lrnnkit.learn.train import TrainConfig
    dirs = _run_dirs(out, job)
    if all(_finished(out, job["experiment"], r) for r in job["runs"]):
        return []
    t = time.time()
    before = max(_elapsed(d) for d in dirs)     # max_seconds counts the resumed runs' earlier seconds too
    cap = {"max_seconds": before + safety_cap} if safety_cap else {}
    cfgs = [TrainConfig.from_json(dict(r["config"], **cap)) for r in job["runs"]]
    try:
        if job["batched"]:
            results = train_batched(cfgs, dirs)
        else:
            results = _one_by_one(job, out, cfgs, dirs, None if not safety_cap else t + safety_cap)
        status = "ok"
    except Exception as exc:    # a failed job is recorded, the others go on
        results, status = [{"error": f"{type(exc).__name__}: {exc}"}] * len(cfgs), "failed"
    recs = []
    for r, c, res in zip(job["runs"], cfgs, results):
        if res is None:         # not started, or finished in an earlier call: its record stands
            continue
        model = res.get("_model")
        res = {k: v for k, v in res.items() if k != "_model"}
        if model is not None and status == "ok" and res.get("steps") == c.steps:
            try:    # the measurements after training must not lose the trained run's record
                res.update(_after_training(job["experiment"], model, c, 60.0 / len(cfgs)))
            except Exception as exc:
                res["after_training_error"] = f"{type(exc).__name__}: {exc}"
        res["config_label"] = r["config_label"]
        if "steps" in res and "seconds" in res:
            res["ms_per_step"] = round(1000 * res["seconds"] / max(1, res["steps"]), 2)
        rec = {"experiment": job["experiment"], "label": r["label"], "scale": "paper", "config": r["config"],
               "status": status, "wall": round(time.time() - t, 1), "result": res}
        rp = _record_path(out, job["experiment"], r["label"])
        os.makedirs(os.path.dirname(rp), exist_ok=True)
        from lrnnkit.fileio import atomic_write_text
        atomic_write_text(rp, json.dumps(rec, indent=1))
        recs.append(rec)
    return recs


def _one_by_one(job: dict, out: str, cfgs: list, dirs: list, until: float | None) -> list:
    """Train a job's runs in turn, the job's ``safety_cap`` shared among them: each run may train until ``until``
    (an absolute ``time.time()``; its ``max_seconds`` is the seconds its checkpoints hold plus what is left), not
    the whole cap each (three runs once took three caps and overran a device call). A run whose record already says
    finished, or that would get less than :data:`MIN_TRAIN_S`, is not started (None: it resumes in a later call)."""
    import dataclasses
    import time

    from lrnnkit.learn.train import train
    results = []
    for r, c, d in zip(job["runs"], cfgs, dirs):
        if _finished(out, job["experiment"], r):
            results.append(None)
            continue
        if until is not None:
            left = until - time.time()
            if left < MIN_TRAIN_S:
                results.append(None)
                continue
            c = dataclasses.replace(c, max_seconds=_elapsed(d) + left)
        results.append(train(c, d))
    return results


HORIZON = dict(max_words=2 ** 16, samples=512, max_extract_cells=4096, max_extract_queries=20000,
               max_extract_seconds=30)


def _after_training(experiment: str, model, cfg, extract_seconds: float = 30.0) -> dict:
    """What ``lrnnkit experiment`` adds to a finished run's result: the experiment's own measurement
    (``Experiment.measure``) and the model's horizon (:func:`lrnnkit.learn.horizon.horizon`: the shortest wrong
    word up to the longest test length, the accuracy curve, an extracted automaton where it fits) under
    :data:`HORIZON` (the small scale's budget; the extraction cut at ``extract_seconds``, at most 30 s: a job's runs
    share one minute of extraction, so that a device call's minutes go to training)."""
    from lrnnkit.learn.experiments import get_experiment, run_horizon
    from lrnnkit.learn.tasks import make_task
    out = {}
    exp = get_experiment(experiment)
    if exp.measure is not None:
        out.update(exp.measure(model, make_task(cfg.task), cfg))
    out["horizon"] = run_horizon(model, cfg, "paper", budget=dict(
        HORIZON, max_extract_seconds=min(HORIZON["max_extract_seconds"], extract_seconds)))
    return out


#: seconds kept back at a deadline for a job's final evaluation and horizon (the horizon's extraction is cut at 30 s;
#: the evaluations of 002's and 004's batched jobs took 8-19 s on two H200s, 2026-11-29), and the least training
#: seconds for which a job is started at all
EVAL_MARGIN_S, MIN_TRAIN_S = 60.0, 20.0
#: the same for a job of fixed-point runs: the final evaluation of 003-state-tracking's three A5 r=1 runs (8192
#: words at each of six lengths, the layer iterating to convergence) took 64 s after a cut on four H200s on
#: 2026-11-29, and the call's packing, left 16 s, was cut in turn
EVAL_MARGIN_FIXED_POINT_S = 150.0


def eval_margin(job: dict | None) -> float:
    """The seconds kept back for ``job``'s evaluation (:data:`EVAL_MARGIN_S`, or :data:`EVAL_MARGIN_FIXED_POINT_S`
    where its runs are of the fixed-point layer)."""
    runs = (job or {}).get("runs", [])
    fixed = any(r.get("config", {}).get("layer") == "fixed-point" for r in runs)
    return EVAL_MARGIN_FIXED_POINT_S if fixed else EVAL_MARGIN_S


def job_cap(now: float, deadline: float | None, safety_cap: float | None,
            margin: float = EVAL_MARGIN_S) -> float | None:
    """The training seconds the next job gets: ``safety_cap``, cut to what is left before ``deadline`` (an absolute
    ``time.time()``) less ``margin`` (:func:`eval_margin`); 0.0 when less than :data:`MIN_TRAIN_S` would be left (the
    job is not started); None when neither bounds it."""
    if deadline is None:
        return safety_cap
    left = deadline - now - margin
    if left < MIN_TRAIN_S:
        return 0.0
    return left if safety_cap is None else min(safety_cap, left)


def next_job(jobs: list, now: float, deadline: float | None, done_seconds) -> int:
    """Which of a GPU's remaining ``jobs`` (in plan order, each with the plan's ``minutes``, None where no cost is
    recorded) to start next: the first whose remaining training (its minutes less ``done_seconds(job)``, the
    seconds its run directories' checkpoints already hold) and :func:`eval_margin` fit before ``deadline``; a job
    of unknown cost counts as fitting. When none fits, the first (it trains what is left and resumes in a later
    call). Without a deadline, the first. A job that would be cut by the deadline is so passed over while a later
    one can finish: a cut run's numbers are no paper-scale result until it is resumed."""
    if deadline is None:
        return 0
    left = deadline - now
    for i, j in enumerate(jobs):
        m = j.get("minutes")
        if m is None or max(0.0, 60.0 * m - done_seconds(j)) + eval_margin(j) <= left:
            return i
    return 0


def _run_dirs(out: str, job: dict) -> list:
    """The run directories of ``job``'s runs under ``out`` (``rundirs/<experiment>/<run>``)."""
    return [os.path.join(out, "rundirs", job["experiment"], _slug(r["label"])) for r in job["runs"]]


def _done_seconds(out: str):
    """``job -> the most training seconds any of its runs' checkpoints under ``out`` holds``."""
    return lambda j: max(_elapsed(d) for d in _run_dirs(out, j))


def cards(gpus: int) -> list:
    """The ``gpus`` cards the workers go to: the first ``gpus`` of the caller's ``CUDA_VISIBLE_DEVICES`` where it
    names that many (so that a grid can leave a card to other work in the same call), else ``0 .. gpus - 1``."""
    seen = [c.strip() for c in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if c.strip()]
    return seen[:gpus] if len(seen) >= gpus else [str(g) for g in range(gpus)]


def run_protocol(jobs, out: str, gpus: int, safety_cap: float | None = None, deadline_s: float | None = None,
                 order: str = "long", per_gpu: int = 1) -> None:
    """``per_gpu`` processes per GPU (``CUDA_VISIBLE_DEVICES``; worker ``w`` on card ``w % gpus`` of :func:`cards`),
    each running its jobs of :func:`plan` in turn (the next one :func:`next_job`: one that finishes before the
    deadline where one does), every job capped by :func:`job_cap` (``deadline_s``: wall seconds for the whole call,
    from now), a worker killed by a signal started once more (:func:`_wait_workers`); then the size of ``rundirs``
    (what must be carried into the next call) and :func:`pack_for_return`. With ``per_gpu`` > 1
    the jobs that are not batched are split into one job per run (:func:`split_one_by_one`): small models leave
    most of a GPU idle, and packed processes fill it (the plan's minutes are one process's alone, so the packed
    runs take longer each; the deadline still caps every job, and a cut run resumes in the next call)."""
    import shutil
    import tempfile
    import time
    if gpus < 1 or per_gpu < 1:
        raise ValueError(f"gpus and per_gpu must be at least 1, not {gpus} and {per_gpu}")
    returned_files()        # a bad LRNNKIT_RETURNED_FILES is refused now, not at the pack after the training
    os.makedirs(out, exist_ok=True)
    deadline = time.time() + deadline_s if deadline_s else None
    if per_gpu > 1:
        jobs = split_one_by_one(jobs)
    per = {}
    for w, m, j in plan(jobs, gpus * per_gpu, measured_costs(load_costs()), _load(SPEEDUPS), order):
        per.setdefault(w, []).append({**j, "minutes": m})
    procs = []
    threads = str(max(1, (os.cpu_count() or 1) // len(per)))    # CPU threads per worker: the host's, shared
    specs = tempfile.mkdtemp(prefix="protocol_jobs_")   # not under out: a device call returns only 8 files
    visible = cards(gpus)
    spec = lambda w: os.path.join(specs, f"protocol_jobs_worker{w}.json")  # noqa: E731

    def start(w):
        return subprocess.Popen([sys.executable, os.path.abspath(__file__), spec(w), out],
                                env={**os.environ, "CUDA_VISIBLE_DEVICES": visible[w % gpus],
                                     "OMP_NUM_THREADS": threads})
    for w, js in per.items():
        with open(spec(w), "w") as fh:
            json.dump({"jobs": js, "safety_cap": safety_cap, "deadline": deadline}, fh)
        procs.append(start(w))
    try:
        _wait_workers(dict(zip(per, procs)), start, procs, gpus, deadline)
    except KeyboardInterrupt:   # a call's outer timeout: stop the runs (each checkpoints on SIGINT), still pack
        print("interrupted: stopping the GPU processes (their runs checkpoint), then packing", flush=True)
        _stop(procs)
    finally:
        shutil.rmtree(specs, ignore_errors=True)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(out, "rundirs")) for f in fs)
    print(f"run directories: {size / 2**20:.1f} MiB under {os.path.join(out, 'rundirs')} "
          f"(carry limit {CARRY_BYTES >> 20} MiB)")
    print("packed:", ", ".join(pack_for_return(out)))


def _wait_workers(running: dict, start, procs: list, gpus: int, deadline: float | None) -> None:
    """Wait for every worker (``running``: worker -> process). One killed by a signal (a negative status: SIGSEGV
    once, 2026-11-29, in a job's evaluation after its training) is started again by ``start(worker)``, once, while
    the deadline leaves :data:`MIN_TRAIN_S` and :data:`EVAL_MARGIN_S`: its finished jobs are skipped (their records
    stand) and the job it died in resumes from its run directories' checkpoints (a job killed after its last step
    only evaluates again). A worker that exits with an error status (a Python exception, which would repeat) is
    not started again. New processes are appended to ``procs`` (what an interrupt stops)."""
    import time
    again = set()
    while running:
        for w, p in list(running.items()):
            rc = p.poll()
            if rc is None:
                continue
            del running[w]
            if rc == 0:
                continue
            print(f"worker {w} (gpu {w % gpus}): its jobs' process exited with status {rc} (see its output above)",
                  flush=True)
            left = None if deadline is None else deadline - time.time()
            if rc < 0 and w not in again and (left is None or left > MIN_TRAIN_S + EVAL_MARGIN_S):
                again.add(w)
                print(f"worker {w}: killed by signal {-rc}; started once more (its finished jobs are skipped, the "
                      "job it died in resumes from its checkpoints)", flush=True)
                running[w] = start(w)
                procs.append(running[w])
        time.sleep(0.2)


def _stop(procs, grace_s: float = 30.0) -> None:
    """Send SIGINT to each still running process (``lrnnkit.learn.train`` writes a checkpoint on it) and wait up to
    ``grace_s`` for all of them together (not each: five workers once took five graces and the call overran); kill
    the ones that do not stop."""
    import signal
    import time
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    until = time.time() + grace_s
    for p in procs:
        try:
            p.wait(timeout=max(0.1, until - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


#: the most bytes (before compression) of run-directory files one ``rundirs*.tgz`` part holds: a device call returns
#: files of at most 16 MiB, and safetensors of float32 weights and moments barely compress
PART_BYTES = 15 * 2 ** 20
RETURN_BYTES = 16 * 2 ** 20      # the largest file a device call returns
PIECE_BYTES = 15 * 2 ** 20       # a part over RETURN_BYTES compressed travels in pieces of this size
RETURNED_FILES = 8               # the most files a device call returns


def returned_files() -> int:
    """The files a pack may fill: :data:`RETURNED_FILES`, or ``LRNNKIT_RETURNED_FILES`` from the environment where a
    call writes files of its own beside the grid's (the device returns the first eight in path order, and
    ``grid/runs.tgz`` sorts after ``grid/rundirs*``: a call's own two files once pushed it out, 2026-11-29)."""
    v = os.environ.get("LRNNKIT_RETURNED_FILES", "")
    if not v:
        return RETURNED_FILES
    if not v.isdigit() or not 2 <= int(v) <= RETURNED_FILES:
        from lrnnkit.errors import InputError
        raise InputError(f"LRNNKIT_RETURNED_FILES must be a whole number from 2 (the log and runs.tgz) to "
                         f"{RETURNED_FILES}, not {v!r}")
    return int(v)


def _resume_files(run_dir: str) -> list:
    """What a run directory needs to resume: ``checkpoint.json``, the tensor file it names, ``metrics.jsonl`` (the
    curve it appends to). Not the previous checkpoint kept beside them (``checkpoint.prev.json`` and its tensors,
    a fallback for a damaged file: as large again) nor the lock."""
    from lrnnkit.learn import checkpoint as ck
    names = []
    p = os.path.join(run_dir, ck.CKPT_JSON)
    if os.path.exists(p):
        names.append(ck.CKPT_JSON)
        try:
            tensors = _load(p).get("tensors")
        except (OSError, ValueError):
            tensors = None
        if isinstance(tensors, str) and os.path.exists(os.path.join(run_dir, tensors)):
            names.append(tensors)
    if os.path.exists(os.path.join(run_dir, ck.METRICS)):
        names.append(ck.METRICS)
    return names


def _parts(out: str, limit: int = PART_BYTES) -> list:
    """The run directories under ``out/rundirs`` (``<experiment>/<run>``) in parts of at most ``limit`` bytes of
    :func:`_resume_files` each, whole run directories only, first fit in order of size (largest first); a run
    directory larger than ``limit`` alone is a part of its own. ``[[(path, arcname), ...], ...]``."""
    rd = os.path.join(out, "rundirs")
    runs = []
    for exp in sorted(os.listdir(rd)) if os.path.isdir(rd) else []:
        for run in sorted(os.listdir(os.path.join(rd, exp))):
            d = os.path.join(rd, exp, run)
            if not os.path.isdir(d):
                continue
            files = [(os.path.join(d, f), os.path.join("rundirs", exp, run, f)) for f in _resume_files(d)]
            if files:
                runs.append((sum(os.path.getsize(f) for f, _ in files), files))
    parts: list = []     # [size, files]
    for size, files in sorted(runs, key=lambda x: -x[0]):
        for part in parts:
            if part[0] + size <= limit:
                part[0] += size
                part[1] += files
                break
        else:
            parts.append([size, list(files)])
    return [files for _, files in parts]


def pack_for_return(out: str, limit: int = PART_BYTES) -> list:
    """Put what a device call must bring back into a few files directly under ``out``: ``runs.tgz`` (every run's
    record file and its ``metrics.jsonl``: what ``--summarise`` and the curves read) and the run directories, with
    what each needs to resume (:func:`_resume_files`), in ``rundirs.tgz``, ``rundirs-1.tgz``, ... (:func:`_parts`:
    each at most ``limit`` bytes before compression). A part over 16 MiB compressed (one large run directory) is
    cut into pieces ``NAME.000``, ``NAME.001``, ... of :data:`PIECE_BYTES` while the returned files allow it, else
    left out, and said. A device call returns at most 8 files, each at most two folders below ``$OUT`` and 16 MiB:
    the run files themselves, three folders down (``runs/<experiment>/<run>.json``), never come back. Join the
    pieces of a part (``cat NAME.??? > NAME``) and unpack every part into one folder to carry it into the next
    call. Returns what was written."""
    import tarfile
    made = []
    runs_tgz = os.path.join(out, "runs.tgz")
    with tarfile.open(runs_tgz + ".tmp", "w:gz") as tf:
        for d, _, fs in os.walk(out):
            rel = os.path.relpath(d, out)
            for f in sorted(fs):
                if rel.split(os.sep)[0] == "runs" or f == "metrics.jsonl":
                    tf.add(os.path.join(d, f), arcname=os.path.join(rel, f))
    os.replace(runs_tgz + ".tmp", runs_tgz)
    made.append(f"runs.tgz ({os.path.getsize(runs_tgz) / 2**20:.2f} MiB)")
    for f in os.listdir(out):      # an earlier pack's parts: each pack says the whole of what there is
        if f.startswith("rundirs") and (f.endswith(".tgz") or ".tgz." in f):
            os.remove(os.path.join(out, f))
    slots = returned_files() - 2        # the call's log and runs.tgz come back too
    for i, files in enumerate(_parts(out, limit)):
        name = "rundirs.tgz" if i == 0 else f"rundirs-{i}.tgz"
        tgz = os.path.join(out, name)
        if slots <= 0:      # nothing more comes back: not compressed at all (377 MiB of 003's fixed-point run
            made.append(f"{name} left out (no returned file left; its jobs cannot resume in the next call)")
            continue        # directories once took the seconds a call had left, 2026-11-29)
        with tarfile.open(tgz + ".tmp", "w:gz") as tf:
            for path, arc in files:
                tf.add(path, arcname=arc)
        size = os.path.getsize(tgz + ".tmp")
        pieces = -(-size // PIECE_BYTES)
        if size <= RETURN_BYTES:
            os.replace(tgz + ".tmp", tgz)
            made.append(f"{name} ({size / 2**20:.2f} MiB)")
            slots -= 1
        elif pieces <= slots:       # one run directory over the limit (004's bilinear, width 256: 46 MiB)
            with open(tgz + ".tmp", "rb") as fh:
                for k in range(pieces):
                    piece = f"{tgz}.{k:03d}"
                    with open(piece + ".tmp", "wb") as pf:
                        pf.write(fh.read(PIECE_BYTES))
                    os.replace(piece + ".tmp", piece)
            os.remove(tgz + ".tmp")
            made.append(f"{name} in {pieces} pieces {name}.000 .. .{pieces - 1:03d} ({size / 2**20:.1f} MiB; "
                        f"join: cat {name}.??? > {name})")
            slots -= pieces
        else:
            os.remove(tgz + ".tmp")
            made.append(f"{name} left out ({size / 2**20:.1f} MiB: more than the {slots} returned files left "
                        "would hold; its jobs cannot resume in the next call)")
    return made


if __name__ == "__main__":     # one GPU's jobs, in turn
    ROOT = os.path.dirname(HERE)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import faulthandler
    import time
    faulthandler.enable()   # a worker killed by a signal (SIGSEGV once, 2026-11-29) prints its Python stack
    every = float(os.environ.get("LRNNKIT_STACKS_EVERY", "0") or 0)
    if every > 0:       # where a worker is, every so often (a call that overruns says where it was)
        faulthandler.dump_traceback_later(every, repeat=True)
    spec = _load(sys.argv[1])
    me = os.path.basename(sys.argv[1])[:-len(".json")]
    todo = list(spec["jobs"])
    while todo:
        i = next_job(todo, time.time(), spec.get("deadline"), _done_seconds(sys.argv[2]))
        cap = job_cap(time.time(), spec.get("deadline"), spec["safety_cap"], eval_margin(todo[i]))
        if cap == 0.0:
            for j in todo:
                print(f"{me}: skipped for time: {j['experiment']} / {j['label']}", flush=True)
            break
        j = todo.pop(i)
        t0 = time.time()
        print(f"{me}: start {j['experiment']} / {j['label']} ({len(j['runs'])} runs, cap "
              f"{'none' if cap is None else f'{cap:.0f} s'})", flush=True)
        recs = run_protocol_job(j, sys.argv[2], cap)
        print(f"{me}: done {j['experiment']} / {j['label']} in {time.time() - t0:.0f} s: "
              + "; ".join(f"{r['status']}, {r['result'].get('steps')} steps, train "
                          f"{r['result'].get('seconds') or 0:.0f} s" for r in recs), flush=True)
