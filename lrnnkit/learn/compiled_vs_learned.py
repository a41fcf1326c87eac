"""Compiled versus learned: for an experiment's automaton, the certified cost of the compiled model beside the
smallest trained model among the stored runs that reaches the experiment's target.

Compiled side (:func:`compiled_cost`): ``lrnnkit.compile(fsa)`` builds the cheapest applicable construction (the
registry's order: GH layers first, then total width, factors per token, layers; :mod:`lrnnkit.constructions`)
and ``lrnnkit.certify(model)`` checks it exactly for inputs of every length. The costs are those of the
constructions' statements: a permutation automaton of ``n`` points in one layer of width ``n`` with at most
``n - 1`` generalized Householder factors per token, parity and ``Z_m`` in one layer of width 1 and 2 (000,
Theorem 3); a group with a faithful action by 3-D rotations (S4, A5) in width 3 with two factors (001, Section
5.1; one DeltaProduct layer of ``n_h`` factors, 001 Theorem 1 for the dihedral groups in two layers); any other
automaton through its Krohn-Rhodes cascade, one layer per level (000, Theorem 4). Reported: the construction,
layers, the widths per layer and their sum (the **total width**: the size of the recurrent state), and the **GH
factors per token** (the most factors one token applies in one layer: the certificate's
``max_factors_per_token``), as in ``benchmarks/RESULTS.md``, section "default construction".

Learned side (:func:`smallest_reaching`): among the stored runs of an experiment on one task, those whose
measured value reaches the experiment's :class:`Target` (its own criterion where it states one, else token
accuracy >= 0.9 at the longest test length), the smallest by (layers x width, ``n_h``, steps, parameters): the state and the factors per token first, then
the training it took; parameters last because some stored runs (001's Fig. 3 cells) do not record them.
"Smallest" is among what ran: the stored runs are small-scale (minutes on one GPU, or seconds on a CPU), not a
search for the smallest model that can learn the task.

Tasks that are not a plain automaton over their letters -- brackets (context-free), several tokens per letter,
copying -- have no single automaton to compile (:func:`task_automaton` says why).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..automata.fsa import FSA
from ..certify import certify
from ..constructions import compile as compile_model
from .tasks import AutomatonTask, BracketArithTask, CopyTask, make_task

__all__ = ["Target", "TARGETS", "target_of", "measured", "smallest_reaching", "task_automaton", "compiled_cost",
           "compare"]


@dataclass(frozen=True)
class Target:
    """What "reaches the target" means for an experiment: ``metric`` of a run's result at least ``threshold``.

    ``metric``: ``"scaled_mean"`` (000's scaled accuracy, mean over the test lengths), ``"final_at_longest"``
    (accuracy of the last position at the longest test length), ``"token_at_longest"`` (token accuracy at the
    longest test length, 001's metric)."""
    metric: str
    threshold: float = 0.9
    text: str = ""


_TOKEN = Target("token_at_longest", 0.9, "token accuracy >= 0.9 at the longest test length")
_SCALED = Target("scaled_mean", 0.9, "scaled accuracy >= 0.9, mean over the test lengths")

#: the experiments' own criteria where they state an absolute one (the judges in :mod:`.experiments`); a judge
#: that only compares configurations (000-modarith, 000-z60) gets the metric its claim is stated in
TARGETS = {
    "000-parity": _SCALED,
    "000-modarith": _SCALED,
    "000-modarith-brackets": _SCALED,
    "000-s5": Target("final_at_longest", 0.9, "final accuracy >= 0.9 at the longest test length"),
    "004-bilinear": _SCALED,
    "003-modarith-brackets": _SCALED,
}


def target_of(experiment: str) -> Target:
    return TARGETS.get(experiment, _TOKEN)


def _longest(d: dict) -> str:
    return str(max(int(k) for k in d))


def measured(result: dict, metric: str) -> float | None:
    """The value of ``metric`` (:class:`Target`) in a run's stored result; None where the result lacks it.
    ``scaled_mean`` reads the test mixture's scaled accuracy where the run has one (``test_mix``: 000, Fig. 4 and
    Table 3 score one set of words of mixed lengths), else the mean over the per-length scaled accuracies."""
    if metric == "scaled_mean":
        mix = result.get("test_mix")
        if isinstance(mix, dict) and mix.get("scaled_accuracy") is not None:
            return float(mix["scaled_accuracy"])
        v = result.get("scaled_accuracy") or {}
        return sum(v.values()) / len(v) if v else None
    key = {"final_at_longest": "final_accuracy", "token_at_longest": "test_accuracy"}.get(metric)
    if key is None:
        raise ValueError(f"unknown metric {metric!r}")
    d = result.get(key) or {}
    return float(d[_longest(d)]) if d else None


def _facts(label: str, result: dict) -> dict:
    """The trained model's size, from the run's stored config (``head_dim`` defaults to width // heads as in
    :class:`~lrnnkit.learn.models.SequenceModel`)."""
    c = result.get("config") or {}
    width, heads = int(c.get("width", 0)), int(c.get("heads", 1) or 1)
    return {"label": result.get("_label", label), "task": result.get("task") or c.get("task"), "layer": c.get("layer"), "width": width,
            "layers": int(c.get("layers", 1)), "heads": heads, "head_dim": int(c.get("head_dim") or max(1, width // heads)),
            "n_h": int(c.get("n_h", 1) or 1), "block_size": c.get("block_size"), "parameters": result.get("parameters"),
            "steps": result.get("steps"), "scale": result.get("_scale")}


def _size_key(f: dict) -> tuple:
    p = f["parameters"]
    return (f["layers"] * f["width"], f["n_h"], f["steps"] or 0, p if p is not None else math.inf, f["label"])


def smallest_reaching(runs: dict, target: Target) -> dict:
    """``{"reached": facts | None, "best": facts | None}`` over ``runs`` ({label: stored result}): ``reached`` the
    smallest run (layers x width, then ``n_h``, steps, parameters) whose ``target.metric`` is at least
    ``target.threshold``; ``best`` the run with the highest value (what came closest, for "none reached it").
    Each facts dict has the run's size and ``value``. Runs without the metric are left out."""
    scored = []
    for label, r in runs.items():
        if not isinstance(r, dict):
            continue
        v = measured(r, target.metric)
        if v is not None:
            scored.append({**_facts(label, r), "value": v})
    ok = [f for f in scored if f["value"] >= target.threshold]
    return {"reached": min(ok, key=_size_key) if ok else None,
            "best": max(scored, key=lambda f: (f["value"], f["label"])) if scored else None}


def _restricted(fsa: FSA, letters) -> FSA:
    letters = [int(a) for a in letters]
    return FSA(tuple(fsa.alphabet[a] for a in letters), np.asarray(fsa.delta)[:, letters], fsa.start,
               fsa.accepting, fsa.labels, fsa.state_names, f"{fsa.name} on {len(letters)} letters")


def task_automaton(task: str) -> tuple:
    """``(fsa, "")`` for a task that is one automaton over its letters (:func:`~lrnnkit.learn.tasks.make_task`'s
    automaton, restricted to the task's letters where it draws a subset, e.g. ``S5-swaps``), else
    ``(None, reason)``. mod-arith tasks draw only well-formed words; the automaton is the same."""
    t = make_task(task)
    if isinstance(t, BracketArithTask):
        return None, "no single automaton (brackets: context-free)"
    if isinstance(t, CopyTask):
        return None, "no single automaton (copying: the state grows with the word)"
    if not isinstance(t, AutomatonTask):
        return None, f"no single automaton ({type(t).__name__})"
    if t.k > 1:
        return None, f"no single automaton ({t.k} tokens per letter)"
    if len(t.letters) < t.fsa.n_letters:
        return _restricted(t.fsa, t.letters), ""
    return t.fsa, ""


def compiled_cost(fsa: FSA) -> dict:
    """The default construction for ``fsa``, built and certified: ``construction``, ``layers``, ``widths``,
    ``total_width``, ``factors_per_token`` (the certificate's, None where a layer is not GH), ``certified``,
    ``states``, ``letters`` and the seconds of compile and certify."""
    t0 = time.perf_counter()
    model = compile_model(fsa)
    t1 = time.perf_counter()
    cert = certify(model)
    t2 = time.perf_counter()
    return {"construction": model.provenance.get("construction"), "layers": cert.layers,
            "widths": [int(w) for w in cert.widths], "total_width": int(sum(cert.widths)),
            "factors_per_token": cert.max_factors_per_token, "certified": bool(cert.certified),
            "states": fsa.n_states, "letters": fsa.n_letters, "compile_s": t1 - t0, "certify_s": t2 - t1}


def _pool(records: list, name: str) -> dict:
    """{label: result} of every stored run of experiment ``name`` (``runs`` and ``superseded``, every scale);
    labels carry the scale where several records hold the experiment."""
    recs = [r for r in records if r.get("name") == name]
    out = {}
    for rec in recs:
        for part in ("runs", "superseded"):
            for label, r in (rec.get(part) or {}).items():
                if isinstance(r, dict):
                    key = label if len(recs) == 1 else f"{label} ({rec.get('scale')})"
                    out[key] = {**r, "_scale": rec.get("scale"), "_label": label}
    return out


def _task_of(r: dict):
    return r.get("task") or (r.get("config") or {}).get("task")


def compare(experiments: dict, records: list, compiled=compiled_cost) -> list:
    """One row per (experiment, task): ``experiments`` {name: [tasks]} (the definitions, in order), ``records``
    the stored results (each ``{"name", "scale", "runs", "superseded"?}``). A row: ``experiment``, ``task``,
    ``target`` (:class:`Target`), ``compiled`` (:func:`compiled_cost`, or None) or ``no_automaton`` (the reason),
    ``runs`` (how many stored runs on the task), ``reached`` and ``best`` (:func:`smallest_reaching`). Each
    automaton is compiled once (by content hash)."""
    cache: dict = {}
    rows = []
    for name, tasks in experiments.items():
        pool = _pool(records, name)
        seen = list(dict.fromkeys(list(tasks) + [_task_of(r) for r in pool.values() if _task_of(r)]))
        target = target_of(name)
        for task in seen:
            fsa, why = task_automaton(task)
            comp = None
            if fsa is not None:
                h = fsa.content_hash()
                if h not in cache:
                    cache[h] = compiled(fsa)
                comp = cache[h]
            runs = {k: r for k, r in pool.items() if _task_of(r) == task}
            rows.append({"experiment": name, "task": task, "target": target, "compiled": comp, "no_automaton": why,
                         "runs": len(runs), **smallest_reaching(runs, target)})
    return rows
