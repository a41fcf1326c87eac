"""Records of training runs as the results files store them (``{key: result}``, each result with its ``config``
and, where merged from several calls, its ``config_label``): which runs of a grid speak. Torch-free, below both
:mod:`lrnnkit.learn` (whose judges reduce the runs as a paper reports them) and :mod:`lrnnkit.theorems` (whose
registry reads the stored results), so that the two pick the same runs by one rule."""
from __future__ import annotations

__all__ = ["MAMBA", "MAMBA_LIKE", "mamba_key", "run_key", "run_cells", "seed_outcomes", "with_seed_outcomes"]

#: the two names of a paper's Mamba configuration in run records (:mod:`lrnnkit.learn.mamba_configs` says which model
#: each stands for): Mamba's block (layer "mamba", scale paper) and lrnnkit's one-state diagonal layer (below it)
MAMBA = "Mamba"
MAMBA_LIKE = "Mamba-like diagonal"


def mamba_key(label: str, have) -> str:
    """The label in ``have`` (a mapping or a collection of labels) that names ``label``'s configuration: ``label``
    itself, else ``label`` with its Mamba name exchanged for the other one (``"Mamba-like diagonal [0,1]"`` <->
    ``"Mamba [0,1]"``, a prefix such as ``"A5 "`` kept); ``label`` unchanged where neither is in ``have``. Here, below
    both the judges and the registry, so that the two read a configuration under either name by one rule."""
    if label in have:
        return label
    for ours, other in ((MAMBA_LIKE + " ", MAMBA + " "), (MAMBA + " ", MAMBA_LIKE + " ")):
        if ours in label:
            alias = label.replace(ours, other, 1)
            if alias in have:
                return alias
            break
    return label


def run_key(label: str, lr: float, seed: int) -> str:
    """The key of one run of a configuration among its seeds x learning rates: ``"label (lr L, seed S)"`` (the
    protocol grid's run files and ``lrnnkit experiment --protocol`` alike; ``config_label`` holds ``label``)."""
    return f"{label} (lr {lr:g}, seed {seed})"


def run_cells(runs: dict, labels=None) -> dict:
    """``{configuration: {(seed, lr): run}}``: per configuration (``config_label``, else the run's key) and (seed,
    learning rate) the run with the most steps (ties: the first), torch-free; only ``labels`` if given. The one
    rule by which the judges (:func:`lrnnkit.learn.protocols.reduce_as_reported`) and the registry
    (:func:`lrnnkit.theorems.empirical._best`) pick the runs of a grid that speak."""
    cells: dict = {}
    for k, r in runs.items():
        c = r.get("config_label", k)
        if labels is not None and c not in labels:
            continue
        cfg = r.get("config") if isinstance(r.get("config"), dict) else {}
        cell = cells.setdefault(c, {})
        key = (cfg.get("seed"), cfg.get("lr"))
        if key not in cell or r.get("steps", 0) > cell[key].get("steps", 0):
            cell[key] = r
    return cells


def seed_outcomes(judge, runs: dict) -> dict:
    """``{seed: outcome}``: ``judge`` (runs -> judgement: an experiment's ``judge_runs`` or one part's) applied to
    each seed's runs alone, for the seeds that every configuration of ``runs`` ran (each configuration's cell at
    that seed, reduced as the experiment reduces). A paper-scale rejection is recorded as ``falsified`` only where
    every one of these rejects too (:func:`lrnnkit.theorems.empirical._at_paper_scale`): a rejection of the
    reduced runs that one seed alone does not share depends on the seed, not on the claim."""
    configs = {r.get("config_label") or k for k, r in runs.items()}
    by_seed: dict = {}
    for k, r in runs.items():
        cfg = r.get("config") if isinstance(r.get("config"), dict) else {}
        by_seed.setdefault(cfg.get("seed"), {})[k] = r
    out = {}
    for seed, sub in sorted(by_seed.items(), key=lambda kv: str(kv[0])):
        if {r.get("config_label") or k for k, r in sub.items()} == configs:
            out[seed] = judge(sub).get("outcome", "not judged")
    return out


def with_seed_outcomes(judgement: dict, judge, runs: dict) -> dict:
    """``judgement`` with ``seed_outcomes`` (:func:`seed_outcomes`, keys as strings) where two or more seeds ran
    every configuration: a results file stores them, and the registry reads them to tell a rejection that holds for
    every seed from one that depends on the seed."""
    per = seed_outcomes(judge, runs)
    return {**judgement, "seed_outcomes": {str(k): v for k, v in per.items()}} if len(per) >= 2 else judgement


def call_terms(pv: dict) -> str:
    """A GPU call's concurrency and cap as its provenance gives them: numbers (``4`` runs at a time, a cap of
    ``320`` s) or the call's own words."""
    conc, cap = pv.get("concurrency", "?"), pv.get("cap", "?")
    conc = f"{conc} runs at a time" if isinstance(conc, (int, float)) else str(conc)
    cap = f"cap {cap:g} s" if isinstance(cap, (int, float)) else f"cap: {cap}"
    return f"{conc}, {cap}"
