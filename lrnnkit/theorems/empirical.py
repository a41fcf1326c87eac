"""Empirical entries of the registry (kind ``empirical``): the papers' learning experiments as reproduced here, and
lrnnkit's own learning measurements (construction as initialisation), each read from a committed results file.

Where the numbers come from: ``benchmarks/results/learning/`` (beside the package in a source checkout), written by
``lrnnkit experiment NAME --scale S --out DIR`` (a ``results.json`` holding the claim, every run's accuracies and
the experiment's judgement; :mod:`lrnnkit.learn.experiments`) and by ``benchmarks/learn_init_from_construction.py``.
One entry per (experiment, scale) found; none when the files are absent (an installed package without the
benchmarks folder).

An experiment may name sub-claims judged on their own (``parts`` in the results file, e.g. 001 Fig. 3's S3 panel:
a GPU slot ran S3 long enough while the whole grid did not fit); each becomes an entry
``PAPER:empirical-SHORT-PART-SCALE`` judged by the part's judge. Where one configuration ran in several GPU
calls, the run with the most training steps speaks for it (:func:`lrnnkit.learn.experiments.best_per_config`).

Verdicts (the registry's four; an empirical claim is never ``falsified`` by a small-scale run that misses it):

* ``holds``: the experiment's judge says "reproduced" at this scale;
* ``open``: "partly reproduced" / "not reproduced" / not judged at this scale -- the evidence says so, with the
  numbers; a negative outcome at tiny or small scale is not evidence against the paper (fewer steps, smaller
  models, no seeds searched);
* ``falsified`` for runs made at the paper's own scale (``paper``: its widths, steps and data sizes) that the judge
  rejects, with the measurements as the counterexample (none is stored: those runs take hours on many GPUs), and for
  lrnnkit's own statement about fine-tuning a construction (not a paper's claim), with the run that contradicts it
  as the counterexample. A ``paper`` file counts as the paper's scale only when every deciding run (per
  configuration the one with the most steps) trained its whole schedule: no wall-clock cap (``max_seconds`` null),
  no schedule sized to one (``auto_steps`` false), all its configured ``steps`` and not ``stopped_early``. The
  paper's models and data trained for fewer steps are not its experiment: a rejection of such runs stays ``open``,
  the evidence naming the capped runs (:func:`capped_runs`).

Each check takes the loaded results as a keyword argument (default: the stored file); its perturbation
(:func:`perturbed_record`) is the stored file as if measured at the paper's scale, every run uncapped, with the
numbers turned against the claim, which the judge must reject.

The recorded verdict is the judgement stored in the results file (what was measured, when it was measured); the
check reads the file again (it reads only stored JSON: the judges live with the experiments in
:mod:`lrnnkit.learn.experiments`, beside this package; the root package names them, :data:`JUDGES`; a perturbation
is judged afresh by them, ``lrnnkit theorems --check ID --perturbed``). ``proofs_tests/theorems/test_empirical.py`` applies each
experiment's judge, as the code defines it now, to the stored per-run numbers, so a judge that changed, or a results
file edited by hand, shows up there as a disagreement. Re-running the training itself is the experiment's command (in the
evidence), not the check: it takes minutes on a GPU.
"""
from __future__ import annotations

import glob
import json
import os

from ..automata.sources import load_source
from ..run_records import call_terms, mamba_key, run_cells, seed_outcomes
from . import rate_sweeps
from .registry import _REGISTRY, OWN, CheckResult, Statement, judge_source, register

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS_DIR = os.path.join(ROOT, "benchmarks", "results", "learning")
OUTCOME_VERDICT = {"reproduced": "holds"}


def _load(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def _experiment_files() -> list:
    out = []
    for p in sorted(glob.glob(os.path.join(RESULTS_DIR, "**", "*.json"), recursive=True)):
        d = _load(p)
        if isinstance(d, dict) and {"name", "paper", "claim", "scale", "runs"} <= set(d) and \
                isinstance(d["runs"], dict) and d.get("kind") not in ("comparison", "lr-sweep"):
            out.append((p, d))
    return out


def _rel(p: str) -> str:
    return os.path.relpath(p, ROOT)


def _whole_words(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last space before the limit, marked with
    " ..." (never mid-word: a number cut short would read as another number)."""
    if len(text) <= limit:
        return text
    return text[:text.rfind(" ", 0, limit - 4) if " " in text[:limit - 4] else limit - 4].rstrip(" ,;:") + " ..."


def _summary(meas) -> str:
    return json.dumps(meas, sort_keys=True)


#: experiment name -> its experiment (``judge_runs(runs)``, ``judge_part(part, runs)``), for judging a given record
#: (a perturbation) afresh. The package fills it: the root package names the source of the experiments
#: (:func:`lrnnkit.theorems.registry.set_judge_source`, lrnnkit.learn.experiments) and :func:`judge_of` reads it the
#: first time a judge is needed (lrnnkit.learn sits beside the registry, so neither imports the other).
JUDGES: dict = {}


def judge_of(name: str):
    """The judge of experiment ``name`` (:data:`JUDGES`, filled from the registered judge source)."""
    if name not in JUDGES:
        source = judge_source()
        if source is None:
            raise RuntimeError(f"no judge source registered (lrnnkit/__init__.py sets it) for experiment {name!r}")
        try:
            JUDGES.update(source())
        except ImportError as exc:
            raise RuntimeError(f"judging experiment {name!r} needs lrnnkit.learn, which cannot be imported "
                               f"({exc})") from None
    try:
        return JUDGES[name]
    except KeyError:
        raise RuntimeError(f"no judge registered for experiment {name!r} (the experiments are "
                           f"{', '.join(sorted(JUDGES)) or 'none'})") from None


def _rejudge(judge, who: str, path: str, what: str) -> CheckResult:
    """Run an experiment's judge on recorded runs (``judge()``) and turn its outcome into a verdict; a judge that
    cannot read the file gives ``open``."""
    try:
        j = judge()
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return CheckResult("open", f"the judge of {who} cannot read {_rel(path)}: {exc!r}")
    return CheckResult(OUTCOME_VERDICT.get(j.get("outcome"), "open"),
                       f"re-judged {_rel(path)} ({what}): {j.get('outcome')}; {_summary(j.get('measured', {}))}",
                       details={"judgement": j})


def _stored(judgement: dict, who: str, path: str, what: str) -> CheckResult:
    """The verdict of a judgement stored in a results file (``{"outcome": ..., "measured": ...}``); a judgement
    without an outcome gives ``open``."""
    if not isinstance(judgement, dict) or "outcome" not in judgement:
        return CheckResult("open", f"{_rel(path)} holds no judgement of {who}")
    return CheckResult(OUTCOME_VERDICT.get(judgement.get("outcome"), "open"),
                       f"read {_rel(path)} ({what}): {judgement.get('outcome')}; "
                       f"{_summary(judgement.get('measured', {}))}", details={"judgement": judgement})


def _best(runs: dict, labels=None) -> dict:
    """{cell: run}: the runs the judges read (:func:`run_cells`; :func:`lrnnkit.learn.protocols.reduce_as_reported`
    reduces these cells as the paper reports; one cell per configuration is
    :func:`lrnnkit.learn.experiments.best_per_config`'s run). A configuration of one cell is keyed by its label, one
    of several by ``label (seed S, lr L)``, so that a capped seed of a grid is named; only ``labels`` if given."""
    cells = run_cells(runs, labels)
    best: dict = {}
    for c, cell in cells.items():
        for (seed, lr), r in cell.items():
            best[c if len(cell) == 1 else f"{c} (seed {seed}, lr {lr:g})" if isinstance(lr, (int, float))
                 else f"{c} (seed {seed}, lr {lr})"] = r
    return best


def capped_runs(runs: dict) -> list:
    """``[(configuration, why)]`` for the deciding runs (:func:`_best`) that did not train the whole schedule they
    were configured with: a wall-clock cap (``config.max_seconds``) that bound, a schedule sized to it
    (``config.auto_steps``: ``config.steps`` is then the cut count), fewer ``steps`` than ``config.steps``,
    ``stopped_early``, or no step counts recorded. A cap under which the run trained every configured step (a safety
    limit of a GPU call) did not change the run. Empty: every run is uncapped."""
    out = []
    for c, r in sorted(_best(runs).items()):
        cfg = r.get("config") if isinstance(r.get("config"), dict) else {}
        steps, want = r.get("steps"), cfg.get("steps")
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (steps, want)):
            why = ["no step counts recorded"]
        elif steps < want or r.get("stopped_early"):
            why = [f"{steps} of its {want} configured steps"]
        else:
            why = []
        if cfg.get("max_seconds") is not None and (why or cfg.get("auto_steps")):   # a cap that bound
            why.append(f"a {cfg['max_seconds']} s wall-clock cap")
        if cfg.get("auto_steps"):
            why.append(f"its schedule sized to the cap (auto_steps: {steps} steps)")
        if why:
            out.append((c, ", ".join(why)))
    return out


def _capped_statement(runs: dict, scale: str = "paper") -> str | None:
    """The sentence that says a file's deciding runs were capped (:func:`capped_runs`), or None: at scale ``paper``
    that the runs are not the paper's experiment, at the other scales which runs were cut and how."""
    capped = capped_runs(runs)
    if not capped:
        return None
    shown = "; ".join(f"{c}: {why}" for c, why in capped)
    head = ("Not at the paper's scale: the paper's settings, capped" if scale == "paper"
            else f"Capped runs at scale {scale}")
    return _whole_words(f"{head} ({len(capped)} of {len(_best(runs))} configurations did not train their whole "
                        f"schedule: {shown})", 2000)


def protocol_statement(rec: dict) -> str | None:
    """For a ``paper`` results file whose runs do not follow the paper's protocol, the sentence that says how they
    differ (the file's ``protocol``, written when the runs were recorded by
    :func:`lrnnkit.learn.protocols.protocol_record`); None when they follow it. A file without the field says
    nothing about its protocol and is read as not following it."""
    prot = rec.get("protocol")
    if isinstance(prot, dict) and prot.get("follows") is True:
        return None
    text = prot.get("statement") if isinstance(prot, dict) else None
    return ("Not the paper's protocol: " + (text if isinstance(text, str) and text else
                                            "the results file does not record it"))[:3000]


def _protocol_gate(evidence: str, verdict: str, rec: dict, scale) -> tuple:
    """``(evidence, verdict)`` of an entry's recorded outcome at scale ``paper``: the sentence of
    :func:`protocol_statement` added, and ``holds`` kept back to ``open``, when ``rec``'s runs do not follow the
    paper's protocol (other scales: unchanged)."""
    differs = protocol_statement(rec) if scale == "paper" else None
    if not differs:
        return evidence, verdict
    return f"{evidence} {differs}.", "open" if verdict == "holds" else verdict


def lower_bound_statement(rec: dict) -> str | None:
    """For a ``paper`` results file judged on a number that is at most the paper's own (the file's
    ``protocol.lower_bound``, :func:`lrnnkit.learn.protocols.lower_bound_differences`: e.g. each seed's final
    evaluation where the paper reports each seed's best over training), the sentence that says why a rejection
    is not evidence against the paper; None otherwise."""
    prot = rec.get("protocol")
    texts = prot.get("lower_bound") if isinstance(prot, dict) else None
    if not isinstance(texts, list) or not texts:
        return None
    return ("Not recorded as falsifying the paper: the judged number is at most the paper's ("
            + "; ".join(str(t) for t in texts) + "), so the paper's own number may still pass")[:3000]


_SINGLE_SEED = ("A rejection by one seed is not recorded as falsifying the paper (its protocol may print one seed; "
                "another seed can land elsewhere: 001 Fig. 3's A5 runs left their plateau 500-1400 steps apart between "
                "seeds and calls); configurations with one seed")


def single_seed_configs(runs: dict) -> list:
    """The configurations of ``runs`` (``config_label`` where a run records one, else its label) trained with one
    seed only. A paper-scale rejection needs at least two seeds of every configuration: with fewer it stays
    ``open`` (:func:`_at_paper_scale`)."""
    seeds: dict = {}
    for label, res in runs.items():
        cfg = res.get("config") if isinstance(res.get("config"), dict) else {}
        seeds.setdefault(res.get("config_label") or label, set()).add(cfg.get("seed"))
    return sorted(k for k, v in seeds.items() if len(v) < 2)


_SEED_DEPENDENT = ("The rejection does not hold for every seed, so it is not recorded as falsifying the paper; each "
                   "seed judged alone")


def _at_paper_scale(r: CheckResult, outcome: str, scale, runs: dict, rec: dict, judge=None) -> CheckResult:
    """A judge's rejection (``not reproduced`` / ``partly reproduced``) of runs made at the paper's own settings
    (scale ``paper``: its widths, steps, data sizes) is evidence against the claim: ``falsified``, with the
    measurements as the counterexample. At ``tiny`` and ``small`` scale the same outcome stays ``open`` (the
    evidence names the capped runs, :func:`capped_runs`, at every scale), and so does a ``paper`` file whose
    deciding ``runs`` were capped: fewer steps than the paper's. A paper-scale verdict either way (``holds`` or
    ``falsified``) also needs runs that follow the paper's protocol (seeds, steps, model, data:
    :func:`protocol_statement` of ``rec``); otherwise the entry stays ``open`` and its evidence says what differed.
    A rejection is ``falsified`` only when the judged number is not a mere lower bound of the paper's
    (:func:`lower_bound_statement`), with two or more seeds of every configuration (:func:`single_seed_configs`)
    and each of them rejected by ``judge`` alone (:func:`seed_outcomes`); otherwise ``open``."""
    if scale != "paper":
        capped = _capped_statement(runs, scale)
        return r if not capped else CheckResult(r.verdict, f"{r.evidence}. {capped}", r.counterexample,
                                                r.corrected, r.details)
    rejected = outcome.startswith(("not reproduced", "partly reproduced"))
    if not rejected and r.verdict != "holds":
        return r
    capped = _capped_statement(runs) if rejected else None
    if capped:
        return CheckResult("open", f"{r.evidence}. {capped}", details=r.details)
    differs = protocol_statement(rec)           # either verdict at the paper's scale needs the paper's protocol
    if differs:
        return CheckResult("open", f"{r.evidence}. {differs}", details=r.details)
    if not rejected:
        return r
    below = lower_bound_statement(rec)
    if below:
        return CheckResult("open", f"{r.evidence}. {below}", details=r.details)
    single = single_seed_configs(runs)
    if single:
        return CheckResult("open", f"{r.evidence}. {_SINGLE_SEED}: {', '.join(single)}", details=r.details)
    per_seed = (seed_outcomes(judge, runs) if judge is not None     # a record judged afresh, else the stored
                else (r.details.get("judgement") or {}).get("seed_outcomes") or {})
    said = "; ".join(f"seed {s}: {o}" for s, o in per_seed.items())
    if len(per_seed) < 2 or not all(o.startswith(("not reproduced", "partly reproduced")) for o in per_seed.values()):
        return CheckResult("open", f"{r.evidence}. {_SEED_DEPENDENT}: {said or 'no seed ran every configuration'}",
                           details=r.details)
    measured = (r.details.get("judgement") or {}).get("measured", {})
    per_seed = {str(k): v for k, v in per_seed.items()}
    return CheckResult("falsified", f"at the paper's scale: {r.evidence}; each seed judged alone: {said}",
                       counterexample={"measured": measured, "seed_outcomes": per_seed},
                       details={**r.details, "seed_outcomes": per_seed})


def _exchanged(res: dict) -> dict:
    """A run's record with success and failure exchanged: every accuracy below 1/2 set to 1, every other to 0 (a
    per-prefix curve, ``prefix_accuracy``'s lists, element by element; its ``None``, where no word supervises a
    position, kept). Its ``evaluations`` over training are turned by their best: each evaluation's accuracy at a
    length becomes the turned maximum over all evaluations at that length, so that a judge reading the best
    evaluation (002's 'best test accuracy over training') reads a failure where the run succeeded at any
    evaluation, and a success only where it never did (turning each evaluation alone would hand the judge the
    turned value of the run's worst dip)."""
    def turn(a):       # None: a position no word supervises (last-position tasks' prefix curves) stays None
        return [turn(x) for x in a] if isinstance(a, list) else None if a is None else (1.0 if a < 0.5 else 0.0)
    out = dict(res)
    for k, v in res.items():
        if k.endswith("_accuracy") and isinstance(v, dict):
            out[k] = {L: turn(a) for L, a in v.items()}
    evs = res.get("evaluations")
    if isinstance(evs, list):      # lrnnkit.learn.train.evaluations_of: {"step", "<name>_accuracy": {L: number}}
        tables = [(e, {k: v for k, v in e.items() if k.endswith("_accuracy") and isinstance(v, dict)}) for e in evs]
        best: dict = {}
        for _, t in tables:
            for k, v in t.items():
                row = best.setdefault(k, {})
                for L, a in v.items():
                    row[L] = max(row.get(L, a), a)
        out["evaluations"] = [{**e, **{k: {L: turn(best[k][L]) for L in v} for k, v in t.items()}}
                              for e, t in tables]
    return out


def _iterations_reversed(runs: dict) -> dict:
    """003's iteration runs with the claim's opposite: on A5 the fewer iterations the longer the training length,
    and the copy model needing as many iterations as the sequence has tokens."""
    out = {k: dict(r) for k, r in runs.items()}
    a5 = sorted((k for k in out if k.startswith("A5")), key=lambda k: int(k.rsplit(" ", 1)[1]))
    for i, k in enumerate(a5):
        out[k]["fixed_point_iterations"] = {L: len(a5) - i for L in runs[k]["fixed_point_iterations"]}
    for k, r in out.items():
        if k.startswith("copy") and isinstance(r.get("fixed_point_iterations"), dict):
            r["fixed_point_iterations"] = {L: int(L) for L in r["fixed_point_iterations"]}
    return out


def _uncapped(res: dict, steps: int) -> dict:
    """A run's record as if it had trained a whole schedule of ``steps`` steps with no wall-clock cap: ``steps`` and
    ``config.steps`` both ``steps``, ``max_seconds`` null, ``auto_steps`` false, not stopped early."""
    return {**res, "steps": steps, "stopped_early": False,
            "config": {**res["config"], "steps": steps, "max_seconds": None, "auto_steps": False}}


def perturbed_record(rec: dict) -> dict:
    """The perturbation of an empirical entry: the stored results file as if measured at the paper's scale with
    every configuration finished on one schedule (the most steps any run trained), uncapped, run with two seeds (the
    same numbers twice: :func:`single_seed_configs`), and the numbers turned against the claim (each configuration's success and failure exchanged; 003's iteration counts reversed); the
    judge must reject it, so the check derives ``falsified``."""
    runs = rec["runs"]
    turned = (_iterations_reversed(runs) if rec["name"] == "003-iterations"
              else {k: _exchanged(r) for k, r in runs.items()})
    steps = max(r["steps"] for r in runs.values())
    follows = {"follows": True, "statement": "as if run to the paper's protocol (the perturbation)"}
    runs2 = {}
    for k, r in turned.items():     # each configuration twice, seeds s and s + 1: a rejection needs two seeds
        r = _uncapped(r, steps)
        label = r.get("config_label") or k
        seed = r["config"].get("seed") or 0
        runs2[k] = {**r, "config_label": label}
        runs2[f"{k} (second seed)"] = {**r, "config_label": label, "config": {**r["config"], "seed": seed + 1}}
    return {**rec, "scale": "paper", "failed": {}, "runs": runs2,
            "protocol": follows, "parts": {p: {**pj, "protocol": follows} for p, pj in (rec.get("parts") or {}).items()}}


def one_seed_record(rec: dict) -> dict:
    """``rec`` with each configuration's runs cut to its first seed: the perturbation of a ``falsified`` entry,
    whose counterexample is a rejection by every one of two or more seeds; with one seed the same measurements
    leave the entry ``open`` (:func:`single_seed_configs`)."""
    first: dict = {}
    for k, r in rec["runs"].items():
        c = r.get("config_label") or k
        first[c] = min(first.get(c, r["config"]["seed"]), r["config"]["seed"])
    return {**rec, "runs": {k: r for k, r in rec["runs"].items()
                            if r["config"]["seed"] == first[r.get("config_label") or k]}}


def _perturbation(rec: dict, verdict: str = "open") -> dict | None:
    """``{"record": perturbed_record(rec)}`` (``falsified``: :func:`one_seed_record`), or None where the file's runs
    lack what the perturbation turns."""
    try:
        return {"record": one_seed_record(rec) if verdict == "falsified" else perturbed_record(rec)}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


#: sub-claims of an experiment's printed claim that its judge leaves out, judged here on the stored measurements:
#: (sub-claim, measurement key, configuration(s), rule). A claim is reproduced only if every part of it is, so an
#: unjudged part that the numbers do not support turns "reproduced" into "partly reproduced".
MARGIN = 0.05   # "helps": at least 5 accuracy points above the baseline (far above run-to-run noise of the judge)
EXTRA_PARTS = {
    "000-s5": [("4 tokens per transition helps", "final_accuracy_at_longest_length",
                ("S5 4 tokens/transition, DeltaNet [-1,1] 1L", "S5 standard, DeltaNet [-1,1] 1L"),
                lambda a, b: a >= b + MARGIN, f"4-token accuracy >= standard + {MARGIN}")],
    "000-z60": [("Mamba [-1,1] performs best", "token_accuracy_at_train_length",
                 ("Mamba [-1,1]", "Mamba [0,1]", "DeltaNet [-1,1]", "DeltaNet [0,1]"),
                 lambda a, *others: all(a > b for b in others), "Mamba [-1,1] above each other model")],
}


def extra_parts(name: str, measured: dict) -> list:
    """``[(sub-claim, reproduced, text)]`` for the sub-claims of ``name`` that its judge leaves out (a Mamba
    configuration read under either of its names, :func:`lrnnkit.run_records.mamba_key`)."""
    out = []
    for claim, key, cfgs, rule, criterion in EXTRA_PARTS.get(name, []):
        table = measured.get(key) or {}
        cfgs = tuple(mamba_key(c, table) for c in cfgs)
        vals = [table.get(c) for c in cfgs]
        if any(v is None for v in vals):
            out.append((claim, False, f"{claim}: not measured"))
            continue
        ok = bool(rule(*vals))
        shown = ", ".join(f"{c} {v:g}" for c, v in zip(cfgs, vals))
        out.append((claim, ok, f"{claim}: {'reproduced' if ok else 'not reproduced'} ({shown}; criterion {criterion})"))
    return out


def _with_extra_parts(name: str, outcome: str, measured: dict) -> tuple:
    """The outcome once the unjudged sub-claims are judged too, and the text saying so."""
    parts = extra_parts(name, measured)
    text = "".join(f" Sub-claim not covered by the experiment's judge, judged on the same numbers: {t}."
                   for _, _, t in parts)
    if outcome == "reproduced" and not all(ok for _, ok, _ in parts):
        outcome = "partly reproduced"
    return outcome, text


_NOT_EVIDENCE = " Not reproduced at this scale is not evidence against the paper."


def _paper_verdict(evidence: str, verdict: str, judged: dict, outcome: str, scale, runs: dict, rec: dict) -> tuple:
    """``(evidence, verdict, counterexample)`` of an entry as registered: where the stored judgement at the paper's
    scale passes :func:`_at_paper_scale` (protocol followed, uncapped, two or more seeds, each seed rejected alone)
    the verdict is ``falsified``, as the entry's check derives, the counterexample the measurements and each seed's
    outcome; otherwise unchanged, no counterexample."""
    r = _at_paper_scale(CheckResult(verdict, evidence, details={"judgement": judged}), outcome, scale, runs, rec)
    if r.verdict != "falsified":
        return evidence, verdict, None
    said = "; ".join(f"seed {k}: {v}" for k, v in (judged.get("seed_outcomes") or {}).items())
    return (f"{evidence.replace(_NOT_EVIDENCE, '')} At the paper's scale and protocol, two or more seeds of every "
            f"configuration, each seed judged alone: {said}."), "falsified", \
        {"measured": judged.get("measured"), "seed_outcomes": judged.get("seed_outcomes")}


def sweep_path(name: str) -> str:
    """The results file of ``name``'s rate sweep (``bench_learning.py --record-sweep``)."""
    return os.path.join(RESULTS_DIR, f"{name}-lr-sweep.json")


def _as_corrected(r: CheckResult, rec: dict, sweep: dict | None = None, part: str = "") -> CheckResult:
    """A ``falsified`` paper-scale result of an experiment with a rate sweep (:mod:`.rate_sweeps`) whose corrected
    statement passes becomes ``holds-as-corrected``: the counterexample (the printed rate's runs) kept, the corrected
    statement and its evidence added. Anything else unchanged. ``sweep``: the sweep's record (default: its file);
    ``part``: the entry's part ("" the whole experiment), which must be the one the sweep corrects."""
    name = rec.get("name")
    if r.verdict != "falsified" or getattr(rate_sweeps.SWEEPS.get(name), "part", None) != part:
        return r
    sweep = _load(sweep_path(name)) if sweep is None else sweep
    if not isinstance(sweep, dict) or sweep.get("kind") != "lr-sweep":
        return r
    c = rate_sweeps.judge(rec, sweep)
    evidence = f"{r.evidence.rstrip('. ')}. Rate sweep ({_rel(sweep_path(name))}): {c.evidence}."
    if c.verdict != "holds-as-corrected":
        return CheckResult(r.verdict, evidence, r.counterexample, details=r.details)
    return CheckResult(c.verdict, evidence, r.counterexample, c.corrected, {**r.details, **c.details})


def _sweep_corrected(rec: dict, part: str, verdict: str, evidence: str, cex) -> tuple:
    """``(evidence, verdict, corrected, perturbation)`` of an entry (``part``: "" the whole experiment) as
    registered, after the rate sweep that corrects that entry (:func:`_as_corrected`); a ``holds-as-corrected``
    entry's perturbation is the sweep turned against the corrected statement, otherwise None (the caller's own)."""
    if verdict != "falsified" or getattr(rate_sweeps.SWEEPS.get(rec["name"]), "part", None) != part:
        return evidence, verdict, None, None
    sweep = _load(sweep_path(rec["name"]))
    r = _as_corrected(CheckResult(verdict, evidence, cex), rec, sweep, part)
    perturb = {"sweep": rate_sweeps.perturbed(rec, sweep)} if r.verdict == "holds-as-corrected" else None
    return r.evidence, r.verdict, r.corrected, perturb


def entry_id(rec: dict, part: str | None = None) -> str:
    """The registry id of the entry of results file ``rec`` (``PAPER:empirical-NAME[-PART]-SCALE``, NAME without its
    paper prefix)."""
    paper, name = str(rec["paper"]), rec["name"]
    short = name[len(paper) + 1:] if name.startswith(paper + "-") else name
    return f"{paper}:empirical-{short}{'-' + part if part else ''}-{rec['scale']}"


def _experiment_entry(path: str, rec: dict) -> Statement:
    name, scale = rec["name"], rec["scale"]
    paper = str(rec["paper"])
    sid = entry_id(rec)
    judged = rec.get("judgement") or {}
    outcome = judged.get("outcome", "not judged")
    if rec.get("failed"):
        n_cfg = len({r.get("config_label", k) for k, r in rec["runs"].items()})   # several calls: one config
        outcome = f"incomplete ({n_cfg} configurations finished, {len(rec['failed'])} failed)"
    outcome, extra = _with_extra_parts(name, outcome, judged.get("measured") or {})
    verdict = OUTCOME_VERDICT.get(outcome, "open")
    device = rec.get("device") or ("cpu" if scale == "tiny" else "cuda")
    cmd = f"lrnnkit experiment {name} --scale {scale} --device {device} --out DIR"
    evidence = (f"{outcome} at scale {scale} ({device}): measured "
                f"{_summary(judged.get('measured', {}))}; paper: {_summary(judged.get('paper', ''))}; "
                f"criterion: {judged.get('criterion', 'see lrnnkit.learn.experiments')}. Results: {_rel(path)}; "
                f"command: {cmd}." + extra + ("" if verdict == "holds" else _NOT_EVIDENCE)
                + "".join(f" Part {p}: {(pj.get('judgement') or {}).get('outcome', 'not judged')} (entry "
                          f"{entry_id(rec, p)})." for p, pj in (rec.get("parts") or {}).items()))
    capped = _capped_statement(rec["runs"], scale)
    if capped:
        evidence += f" {capped}."
    evidence, verdict = _protocol_gate(evidence, verdict, rec, scale)
    cex = None
    if judged and not rec.get("failed"):
        evidence, verdict, cex = _paper_verdict(evidence, verdict, judged, outcome, scale, rec["runs"], rec)
    # an incomplete paper-scale grid (configurations that did not run) decides nothing: no check, no perturbation
    # (a judge reads every configuration of its experiment; 003's cannot score the baselines alone)
    incomplete = scale == "paper" and str(judged.get("outcome", "")).startswith("incomplete")
    judged_grid = bool(judged) and not incomplete
    evidence, verdict, corrected, perturb = _sweep_corrected(rec, "", verdict, evidence, cex)
    if perturb is None and judged_grid:
        perturb = _perturbation(rec, verdict)

    def check(profile: str, path=path, name=name, outcome=outcome, record=None, sweep=None) -> CheckResult:
        d = _load(path) if record is None else record
        if d is None:
            return CheckResult("open", f"results file {_rel(path)} is missing or unreadable")
        runs = d["runs"]
        if d.get("failed"):   # some configurations did not finish: a partial grid is not judged
            return CheckResult("open", f"{_rel(path)}: incomplete, {len(runs)} runs finished, "
                                       f"{len(d['failed'])} failed ({_whole_words(', '.join(sorted(d['failed'])), 200)})")
        if record is None:   # the stored judgement (tests re-apply the judges to the stored runs)
            r = _stored(d.get("judgement"), name, path, f"{len(runs)} runs")
        else:                # a given record (a perturbation) is judged afresh
            r = _rejudge(lambda: judge_of(name).judge_runs(runs), name, path, f"{len(runs)} runs")
        j = r.details.get("judgement") or {}
        outcome2, extra2 = _with_extra_parts(name, j.get("outcome", ""), j.get("measured") or {})
        if outcome2 != j.get("outcome"):
            r = CheckResult(OUTCOME_VERDICT.get(outcome2, "open"), r.evidence + extra2, details=r.details)
        r = _at_paper_scale(r, outcome2, d.get("scale"), runs, d,
                            None if record is None else lambda rr: judge_of(name).judge_runs(rr))
        return _as_corrected(r, d, sweep) if record is None else r

    return Statement(id=sid, paper=paper, kind="empirical", statement=rec["claim"],
                     hypotheses=f"{rec.get('figure_or_table', '')}; scale {scale} (lrnnkit's own layers and "
                                f"training loop; see lrnnkit.learn.experiments for the settings)",
                     conclusion=f"outcome at this scale: {outcome}", verdict=verdict, evidence=evidence,
                     counterexample=cex, corrected=corrected, check=check if judged_grid else None,
                     notes=f"results: {_rel(path)}", perturb=perturb)


# --------------------------------------------------------------------------- construction as initialisation
INIT_FILE = os.path.join(RESULTS_DIR, "init_from_construction.json")
INIT_ID = "lrnnkit:construction-init"
INIT_STATEMENT = ("lrnnkit's own question (not a paper's claim): a certified construction (000 Theorem 3) "
                  "loaded as the initial weights of the same trainable model class keeps its accuracy at length "
                  "10^4 after fine-tuning on short words (3-40 letters) with cross-entropy.")
KEEP = 0.99   # 'keeps its accuracy': token accuracy at the long length >= KEEP after fine-tuning


def _states(source: str) -> int:
    """Minimal counterexample order: smaller learning rate, fewer steps, then the smaller automaton."""
    try:
        return load_source(source).n_states
    except Exception:  # an unknown source name in a hand-edited file: order it last
        return 10**9


def _init_verdict(doc: dict) -> tuple:
    worst = None
    rows = []
    for r in doc.get("results", []):
        for run in r["runs"]:
            if run["init"] != "construction":
                continue
            rows.append(f"{r['source']} lr {r['lr']:g}: {run['before']['long']:.4f} -> {run['after']['long']:.4f}")
            if run["before"]["long"] >= KEEP and run["after"]["long"] < KEEP:
                key = (r["lr"], r["steps"], _states(r["source"]), r["source"])
                if worst is None or key < worst[0]:
                    worst = (key, {"source": r["source"], "construction": r["construction"], "lr": r["lr"],
                                   "steps": r["steps"], "batch": r["batch"], "train_len": r["train_len"],
                                   "long_length": r["long_length"], "accuracy_before": run["before"]["long"],
                                   "accuracy_after": run["after"]["long"],
                                   "max_beta_change": run.get("max_beta_change"),
                                   "min_abs_eigenvalue_after": run.get("min_abs_eigenvalue_after")})
    if not rows:
        return "open", "no construction runs recorded", None
    if worst is None:
        return "holds", "; ".join(rows), None
    return "falsified", "; ".join(rows), worst[1]


def _init_kept(doc: dict) -> dict:
    """The perturbation of the construction-init entry: the same results with every construction run's accuracy
    after fine-tuning equal to its accuracy before (the construction kept): no run contradicts the statement."""
    results = []
    for r in doc["results"]:
        runs = [dict(run, after=dict(run["after"], long=run["before"]["long"])) if run["init"] == "construction"
                else run for run in r["runs"]]
        results.append(dict(r, runs=runs))
    return {**doc, "results": results}


def _init_entry() -> Statement | None:
    doc = _load(INIT_FILE)
    if not isinstance(doc, dict) or "results" not in doc:
        return None
    verdict, ev, cex = _init_verdict(doc)
    controls = []
    for r in doc["results"]:
        for run in r["runs"]:
            if run["init"] != "construction":
                controls.append(f"{r['source']} lr {r['lr']:g} {run['init']}: {run['after']['long']:.3f}")
    evidence = (f"scale {doc.get('scale', 'tiny')}; accuracy at length "
                f"{doc['results'][0]['long_length']} before -> after fine-tuning: {ev}. Controls after "
                f"fine-tuning (same budget): {'; '.join(controls)}. Results: {_rel(INIT_FILE)}; command: "
                f"{doc.get('command', 'python benchmarks/learn_init_from_construction.py')}.")

    def check(profile: str, doc=None) -> CheckResult:
        d = _load(INIT_FILE) if doc is None else doc
        if d is None:
            return CheckResult("open", f"{_rel(INIT_FILE)} is missing")
        v, e, c = _init_verdict(d)
        return CheckResult(v, e, counterexample=c)

    return Statement(id=INIT_ID, paper=OWN, kind="empirical", statement=INIT_STATEMENT,
                     hypotheses="one trainable DeltaProduct layer (lrnnkit.learn.init_from_model.ConstructionLRNN) "
                                "initialised from the compiled construction; AdamW, batch 16, words of 3-40 letters",
                     conclusion=f"token accuracy at length 10^4 stays >= {KEEP}", verdict=verdict,
                     evidence=evidence, check=check, counterexample=cex, perturb={"doc": _init_kept(doc)},
                     tests=["proofs_tests/learn/test_analysis.py::test_construction_init_reproduces_compiled_model"],
                     notes="falsified means: fine-tuning on short words moved the construction off its exact "
                           "reflections (betas away from 2, keys rotated), so the state drifts over 10^4 steps")


def _part_entry(path: str, rec: dict, part: str, pj: dict) -> Statement:
    """A sub-claim of an experiment judged on its own (``parts`` in the results file, e.g. 001 Fig. 3's S3 panel):
    its configurations' runs (per configuration the one with the most steps) and the part's judge."""
    name, scale, paper = rec["name"], rec["scale"], str(rec["paper"])
    sid = entry_id(rec, part)
    labels = pj.get("configurations", [])
    judged = pj.get("judgement") or {}
    if str(judged.get("outcome", "")).startswith("incomplete"):
        judged = {}     # a configuration has no run yet: nothing to re-judge or perturb (as a whole entry's)
    failed = sorted(k for k in (rec.get("failed") or {}) if k in labels)
    outcome = (judged.get("outcome", (pj.get("judgement") or {}).get("outcome", "not judged")) if not failed
               else f"incomplete ({', '.join(failed)} failed)")
    verdict = OUTCOME_VERDICT.get(outcome, "open")
    best = _best(rec["runs"], labels)
    deciding = sorted({(r.get("provenance") or {}).get("command", "") for r in best.values()} - {""})
    calls = "; ".join(f"{c}: {pv.get('when', '')}, commit {pv.get('commit', '?')}, {call_terms(pv)}"
                      for c, pv in (rec.get("calls") or {}).items())
    evidence = (f"{outcome} at scale {scale}: measured {_summary(judged.get('measured', {}))}; paper: "
                f"{_summary(judged.get('paper', ''))}; criterion: {judged.get('criterion', '')}. GPU calls: {calls}. "
                f"Results: {_rel(path)} (configurations {', '.join(labels)}); the deciding runs' command: "
                f"{' and '.join(deciding) or 'python benchmarks/bench_learning.py --only ' + name + ' --device cuda'} "
                f"(benchmarks/RESULTS.md, section learning)."
                + ("" if verdict == "holds" else _NOT_EVIDENCE))
    capped = _capped_statement({k: x for k, x in rec["runs"].items() if x.get("config_label", k) in labels}, scale)
    if capped:
        evidence += f" {capped}."
    evidence, verdict = _protocol_gate(evidence, verdict, pj, scale)    # the part's configurations' protocol
    cex = None
    if judged and not failed:
        evidence, verdict, cex = _paper_verdict(evidence, verdict, judged, outcome, scale,
                                           {k: x for k, x in rec["runs"].items() if x.get("config_label", k) in labels},
                                           {"protocol": pj.get("protocol", rec.get("protocol"))})
    evidence, verdict, corrected, perturb = _sweep_corrected(rec, part, verdict, evidence, cex)
    if perturb is None and judged:
        perturb = _perturbation(rec, verdict)

    def check(profile: str, path=path, name=name, part=part, labels=tuple(labels), record=None,
              sweep=None) -> CheckResult:
        d = _load(path) if record is None else record
        if d is None:
            return CheckResult("open", f"results file {_rel(path)} is missing or unreadable")
        bad = sorted(k for k in (d.get("failed") or {}) if k in labels)
        if bad:
            return CheckResult("open", f"{_rel(path)}: {', '.join(bad)} failed")
        if record is None:
            r = _stored(((d.get("parts") or {}).get(part) or {}).get("judgement"), f"{name} / {part}", path, part)
        else:
            r = _rejudge(lambda: judge_of(name).judge_part(part, d["runs"]), f"{name} / {part}", path, part)
        pd = (d.get("parts") or {}).get(part) or {}
        r = _at_paper_scale(r, (r.details.get("judgement") or {}).get("outcome", ""), d.get("scale"),
                            {k: x for k, x in d["runs"].items() if x.get("config_label", k) in labels},
                            {"protocol": pd.get("protocol", d.get("protocol"))},
                            None if record is None else lambda rr: judge_of(name).judge_part(part, rr))
        return _as_corrected(r, d, sweep, part) if record is None else r

    return Statement(id=sid, paper=paper, kind="empirical", statement=pj["claim"],
                     hypotheses=f"{rec.get('figure_or_table', '')}, part {part}; scale {scale} (lrnnkit's own "
                                f"layers and training loop; see lrnnkit.learn.experiments for the settings)",
                     conclusion=f"outcome at this scale: {outcome}", verdict=verdict, evidence=evidence,
                     counterexample=cex, corrected=corrected, check=check if judged else None, perturb=perturb,
                     notes=f"results: {_rel(path)}; whole experiment: {entry_id(rec)}")


def _register_all() -> None:
    for path, rec in _experiment_files():
        entry = _experiment_entry(path, rec)     # a malformed entry raises here, never silently dropped
        if entry.id in _REGISTRY:
            continue   # the same (experiment, scale) twice: the first file (sorted paths) wins
        register(entry)
        for part, pj in (rec.get("parts") or {}).items():
            try:
                register(_part_entry(path, rec, part, pj))
            except (ValueError, KeyError, TypeError):
                continue   # a malformed part in a hand-edited file: no entry
    e = _init_entry()
    if e is not None:
        register(e)


_register_all()
