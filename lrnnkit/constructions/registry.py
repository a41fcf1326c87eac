"""The catalogue of constructions: every explicit-weight construction of the papers, by name.

A :class:`Construction` knows which paper and statement it implements, which automata it applies to, its resource
profile (layers, width, factors per token, as formulas in the automaton's parameters) and how to build a
:class:`lrnnkit.model.Model` from an :class:`lrnnkit.automata.fsa.FSA`. ``compile(fsa)`` picks the applicable
construction of highest priority (the cheapest exact one), or the one named.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError

__all__ = ["Construction", "register", "get", "catalogue", "compile", "applicable"]

_REGISTRY: dict = {}
_LOADED = False


@dataclass
class Construction:
    name: str
    paper: str                   # "000" .. "004"
    statement: str               # "Theorem 3", "Section 4.2", ...
    applies_to: str              # human description: "group automata", "parity", "any automaton"
    build: Callable              # build(fsa, **options) -> Model
    applicable: Callable | None = None   # applicable(fsa) -> None if it applies, else a reason (str)
    layers: str = "1"            # formulas, e.g. "1", "2", "depth of the holonomy cascade"
    width: str = "?"
    factors_per_token: str = "?"
    priority: int = 0            # higher wins in automatic selection
    variant_of: str | None = None  # e.g. "as printed" variants point at their corrected construction
    notes: str = ""
    options: dict = field(default_factory=dict)  # option name -> description

    def reason_not_applicable(self, fsa) -> str | None:
        return None if self.applicable is None else self.applicable(fsa)

    def to_json(self) -> dict:
        return {"name": self.name, "paper": self.paper, "statement": self.statement,
                "applies_to": self.applies_to, "layers": self.layers, "width": self.width,
                "factors_per_token": self.factors_per_token, "priority": self.priority,
                "variant_of": self.variant_of, "notes": self.notes}


def register(c: Construction) -> Construction:
    if c.name in _REGISTRY and _REGISTRY[c.name] is not c:
        raise ValueError(f"construction {c.name!r} registered twice")
    _REGISTRY[c.name] = c
    return c


def _load_all() -> None:
    """Import every construction module so that it registers itself (modules are listed in constructions/__init__)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from . import _modules  # noqa: F401  (imports each construction module, tolerating ones not yet written)


def get(name: str) -> Construction:
    _load_all()
    if name not in _REGISTRY:
        raise InputError(f"unknown construction {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def catalogue() -> list:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda c: (c.paper, c.name))


def _best_first() -> list:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda c: -c.priority)


def applicable(fsa) -> list:
    """The constructions that apply to ``fsa``, best first."""
    return [c for c in _best_first() if c.reason_not_applicable(fsa) is None]


def compile(fsa, construction: str | None = None, **options):
    """Compile ``fsa`` into a Model with the named construction, or the best applicable one."""
    if construction is not None:
        c = get(construction)
        why = c.reason_not_applicable(fsa)
        if why:
            raise InputError(f"construction {construction!r} does not apply to {fsa.name or 'this automaton'}: {why}")
    else:
        # best first, stopping at the first that applies (the checks of low-priority constructions can be slow)
        c = next((x for x in _best_first() if x.reason_not_applicable(fsa) is None), None)
        if c is None:
            raise InputError(f"no construction applies to {fsa.name or 'this automaton'}")
    model = c.build(fsa, **options)
    prov = model.provenance
    prov.setdefault("construction", c.name)
    prov.setdefault("paper", c.paper)
    prov.setdefault("statement", c.statement)
    prov.setdefault("automaton", fsa.to_dict())
    prov.setdefault("automaton_hash", fsa.content_hash())
    return model
