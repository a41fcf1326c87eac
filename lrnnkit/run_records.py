"""Records of training runs as the results files store them (``{key: result}``, each result with its ``config``
and, where merged from several calls, its ``config_label``): which runs of a grid speak. Torch-free, below both
:mod:`lrnnkit.learn` (whose judges reduce the runs as a paper reports them) and :mod:`lrnnkit.theorems` (whose
registry reads the stored results), so that the two pick the same runs by one rule."""
from __future__ import annotations

__all__ = ["run_cells"]


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
