"""The catalogue of constructions: every explicit-weight construction of the papers, by name.

A :class:`Construction` knows which paper and statement it implements, which automata it applies to, its resource
profile (layers, width, factors per token, as formulas in the automaton's parameters) and how to build a
:class:`~lrnnkit.model.ir.Model` from an :class:`lrnnkit.automata.fsa.FSA`.

The default choice (``compile(fsa)`` without a name) is the applicable construction of least **cost**, compared
lexicographically by :meth:`Cost.key`:

1. layers that are products of generalized Householder factors (kinds ``gh`` and ``diagonal``: the LRNNs of
   papers 000/001, eigenvalues in [-1, 1], runnable on the GH kernels) before dense 0/1 or rotation-block layers
   (kinds ``bilinear``, ``block_diagonal`` of papers 002/004), which are not products of GH factors;
2. the **total width** (the sum of the layer widths: the size of the recurrent state, which sets the memory and the
   per-step work of every layer);
3. the **factors per token** (the most GH factors one token applies in one layer: the sequential depth of a step,
   ``n_h`` of DeltaProduct; a non-GH layer counts its width);
4. the number of **layers** (sequential depth of the network);
5. then the construction's ``priority`` (faithfulness to the paper it implements), then its name.

Width comes first because it is what a user pays for on every token and in memory; factors per token second
because each factor is a rank-1 update of the state (cost ``O(width)``), so for equal width fewer factors is
cheaper; layers last because extra layers of small width are cheap (D8: two width-2 layers with one factor beat
one width-8 layer with seven). Costs come from the construction's resource formula (``Construction.cost``, no
build); a construction without one (krohn-rhodes: its widths are known only after the holonomy decomposition,
seconds for S5: benchmarks/RESULTS.md, section "limits") is built and measured, but only when no GH construction
with a cost formula applies. Variants that reproduce a paper as printed (``variant_of`` set) are never chosen automatically.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError, SizeLimitError
from ..automata.fsa import FSA
from ..automata.sources import load_source
from ..certify import resource_profile

__all__ = ["Construction", "Cost", "register", "get", "catalogue", "compile", "applicable", "candidates",
           "choose", "model_cost"]

_REGISTRY: dict = {}
_LOADED = False
_LOADERS: list = []


@dataclass(frozen=True)
class Cost:
    """Resources of a compiled model: ``widths`` per layer, ``factors_per_token`` (the most GH factors one token
    applies in one layer; None when some layer is not a product of GH factors), ``gh`` (every layer is of kind
    ``gh`` or ``diagonal``), ``source``: ``"formula"`` (from the construction's resource formula, nothing built)
    or ``"built"`` (measured on the built model)."""
    widths: tuple
    factors_per_token: int | None
    gh: bool = True
    source: str = "formula"

    @property
    def layers(self) -> int:
        return len(self.widths)

    @property
    def total_width(self) -> int:
        return int(sum(self.widths))

    def key(self) -> tuple:
        """(non-GH layers, total width, factors per token, layers): smaller is cheaper (module docstring)."""
        f = self.factors_per_token if self.factors_per_token is not None else max(self.widths, default=0)
        return (0 if self.gh else 1, self.total_width, int(f), self.layers)

    def to_json(self) -> dict:
        return {"layers": self.layers, "widths": list(self.widths), "total_width": self.total_width,
                "factors_per_token": self.factors_per_token, "gh": self.gh, "source": self.source}


def model_cost(model) -> Cost:
    """The :class:`Cost` of a built model (measured: ``source="built"``)."""
    prof = resource_profile(model)
    gh = all(L.kind in ("gh", "diagonal") for L in model.layers)
    return Cost(tuple(int(w) for w in prof["widths"]), prof["max_factors_per_token"] if gh else None, gh, "built")


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
    cost: Callable | None = None  # cost(fsa) -> Cost from the resource formula (no build), for an applicable fsa

    def reason_not_applicable(self, fsa) -> str | None:
        return None if self.applicable is None else self.applicable(fsa)

    def to_json(self) -> dict:
        return {"name": self.name, "paper": self.paper, "statement": self.statement,
                "applies_to": self.applies_to, "layers": self.layers, "width": self.width,
                "factors_per_token": self.factors_per_token, "priority": self.priority,
                "variant_of": self.variant_of, "notes": self.notes}


def provenance(c: Construction, fsa) -> dict:
    """What a model built by ``c`` records of where it comes from: the construction, its paper and statement, the
    automaton (``FSA.to_dict``) and its content hash (``lrnnkit verify`` certifies against that automaton)."""
    return {"construction": c.name, "paper": c.paper, "statement": c.statement, "automaton": fsa.to_dict(),
            "automaton_hash": fsa.content_hash()}


def register(c: Construction) -> Construction:
    """Add ``c`` to the catalogue; its ``build`` then stamps :func:`provenance` on every model it returns (a
    construction's own build writes none: the registry knows the construction, the automaton is the argument)."""
    if c.name in _REGISTRY and _REGISTRY[c.name] is not c:
        raise ValueError(f"construction {c.name!r} registered twice")
    if c.name not in _REGISTRY:
        build = c.build

        @functools.wraps(build)
        def stamped(fsa, **options):
            model = build(fsa, **options)
            model.provenance = {**model.provenance, **provenance(c, fsa)}
            return model
        c.build = stamped
    _REGISTRY[c.name] = c
    return c


def add_loader(fn: Callable) -> None:
    """Register ``fn()``, called once before the first lookup, to import the construction modules (the package
    hands in :func:`lrnnkit.constructions._modules.load_all`; the registry imports no construction module itself,
    so imports flow one way: construction modules -> registry)."""
    _LOADERS.append(fn)


def _load_all() -> None:
    """Run the loaders once (every construction module registers itself on import)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for fn in _LOADERS:
            fn()


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
    """The constructions that apply to ``fsa``, by priority (highest first)."""
    return [c for c in _best_first() if c.reason_not_applicable(fsa) is None]


def candidates(fsa, build_all: bool = False) -> list:
    """The applicable constructions with their costs, cheapest first: a list of ``(construction, cost)``.

    Variants as printed are left out. ``cost`` is None for a construction without a cost formula that was not
    built, because a GH construction with a formula already applies (``build_all=True`` builds those too). A
    construction whose cost formula (or build) hits a size limit (:class:`~lrnnkit.errors.SizeLimitError`) is
    left out too: it could not be built either, and another one may still apply."""
    cands = [c for c in applicable(fsa) if c.variant_of is None]
    costed, too_large = [], []
    for c in cands:
        if c.cost is not None:
            try:
                costed.append((c, c.cost(fsa)))
            except SizeLimitError as exc:
                too_large.append(exc)
    cheap_gh = any(k.gh for _, k in costed)
    for c in cands:
        if c.cost is None:
            if build_all or not cheap_gh:
                try:
                    costed.append((c, model_cost(c.build(fsa))))
                except SizeLimitError as exc:
                    too_large.append(exc)
            else:
                costed.append((c, None))
    if not costed and too_large:
        raise too_large[0]
    return sorted(costed, key=lambda ck: (ck[1] is None, ck[1].key() if ck[1] is not None else (),
                                          -ck[0].priority, ck[0].name))


def choose(fsa) -> Construction:
    """The default construction for ``fsa``: the applicable one of least cost (module docstring)."""
    cands = candidates(fsa)
    if not cands:
        raise InputError(f"no construction applies to {fsa.name or 'this automaton'}")
    return cands[0][0]


def compile(fsa, construction: str | None = None, **options):
    """Compile ``fsa`` into a Model with the named construction, or the best applicable one. ``fsa`` is an FSA or
    anything :func:`lrnnkit.automata.sources.load_source` reads (a source string, an automata-lib DFA, ...)."""
    if not isinstance(fsa, FSA):
        fsa = load_source(fsa)
    if construction is not None:
        c = get(construction)
        why = c.reason_not_applicable(fsa)
        if why:
            raise InputError(f"construction {construction!r} does not apply to {fsa.name or 'this automaton'}: {why}")
    else:
        c = choose(fsa)
    return c.build(fsa, **options)
