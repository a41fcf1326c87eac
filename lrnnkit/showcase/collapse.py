"""The collapse table over the construction registry: each source automaton compiled by
:func:`lrnnkit.constructions.compile`, then :func:`lrnnkit.precision.demos.collapse_table` (first wrong step per
construction, number format, rounding policy and mitigation; paper 000, Theorems 1-2 in finite precision).

It sits here, above both packages, because the precision package simulates any model and knows no construction.
"""
from __future__ import annotations

from ..automata.sources import load_source
from ..constructions import compile as compile_model
from ..precision.demos import collapse_table as _collapse_table

__all__ = ["SOURCES", "registry_models", "collapse_table"]

SOURCES = ("parity", "counter:3", "counter:5", "group:Z5", "group:D4", "group:S3", "group:S4", "flipflop")


def registry_models(sources=SOURCES) -> list:
    """``[(label, model)]``: each source compiled by the default construction, labelled ``source [construction]``."""
    out = []
    for src in sources:
        m = compile_model(load_source(src))
        out.append((f"{src} [{m.provenance.get('construction', '?')}]", m))
    return out


def collapse_table(sources=SOURCES, **kw) -> dict:
    """:func:`lrnnkit.precision.demos.collapse_table` on :func:`registry_models` of ``sources`` (keywords passed
    on: formats, policies, steps, cap, rotation_m, time_budget)."""
    return _collapse_table(registry_models(sources), **kw)
