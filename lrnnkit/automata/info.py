"""``describe(fsa)``: the structure report behind ``lrnnkit info SOURCE [--json]``.

Keys (exactly the ``info --json`` contract of docs/cli.rst):

* ``states``: number of states of the automaton as given; ``alphabet``: its symbols (list of strings);
* ``minimal_states``: states of the minimal automaton w.r.t. the output labels (:mod:`.minimize`);
* ``monoid_size``: size of the transition monoid ``T(A)`` (identity included) of the automaton as given, or
  null when it exceeds the cap (:data:`MONOID_CAP`); ``is_group``: every letter permutes the states (then
  ``T(A)`` is a group, paper 000 Theorem 3's hypothesis); ``aperiodic``: every ``x`` in ``T(A)`` has
  ``x^k = x^{k+1}`` (null when the monoid is past the cap);
* ``group``: ``{"order", "abelian", "solvable", "min_perm_degree", "name"}`` when ``is_group``, else null
  (:func:`lrnnkit.automata.groups.group_structure`; ``min_perm_degree``/``name`` null past their size caps);
* ``holonomy``: ``{"depth", "depth_rule", "levels": [[{"points", "group_order"}, ...], ...]}`` from
  ``lrnnkit.automata.holonomy.holonomy_summary`` (imported lazily: written by another module), or null when that
  module is missing or the input is too large for it. ``depth_rule`` ("sgpdec", SgpDec >= 0.9.8's direct depth,
  the default; or "sgpdec-0.9.7", the older height-based rule) decides which level a class of images sits on.
"""
from __future__ import annotations

from ..errors import InputError, SizeLimitError
from .fsa import FSA
from .minimize import minimal_states
from .monoid import transition_monoid
from .groups import group_structure

__all__ = ["describe", "render", "MONOID_CAP", "INFO_KEYS"]

MONOID_CAP = 1_000_000
INFO_KEYS = ("states", "alphabet", "minimal_states", "monoid_size", "is_group", "aperiodic", "group", "holonomy")


def _holonomy(fsa: FSA, depth_rule: str = "sgpdec"):
    from .holonomy import holonomy_summary   # networkx: imported only when the decomposition runs
    try:
        return holonomy_summary(fsa, depth_rule=depth_rule)
    except SizeLimitError:
        return None


def describe(fsa: FSA, *, monoid_cap: int = MONOID_CAP, depth_rule: str = "sgpdec") -> dict:
    """The ``info --json`` dict of ``fsa`` (module docstring); ``depth_rule`` is passed to the holonomy
    decomposition (InputError for an unknown rule)."""
    from .holonomy import DEPTH_RULES
    if depth_rule not in DEPTH_RULES:
        raise InputError(f"unknown depth rule {depth_rule!r} (known: {', '.join(DEPTH_RULES)})")
    is_group = all(sorted(t) == list(range(fsa.n_states)) for t in fsa.transformations())
    try:
        M = transition_monoid(fsa, cap=monoid_cap)
        size, aperiodic = M.size, M.is_aperiodic
    except SizeLimitError:
        M, size, aperiodic = None, None, None
    group = None
    if is_group and M is not None:
        group = group_structure(fsa)
    out = {
        "states": fsa.n_states,
        "alphabet": list(fsa.alphabet),
        "minimal_states": minimal_states(fsa),
        "monoid_size": size,
        "is_group": bool(is_group),
        "aperiodic": aperiodic,
        "group": group,
        "holonomy": _holonomy(fsa, depth_rule),
    }
    return out


def render(info: dict, name: str = "") -> str:
    """A short text rendering of :func:`describe`'s dict (the non-JSON ``info`` output)."""
    alpha = info["alphabet"]
    shown = " ".join(alpha[:12]) + (f" ... ({len(alpha)} symbols)" if len(alpha) > 12 else "")
    lines = []
    if name:
        lines.append(f"automaton      {name}")
    lines += [
        f"states         {info['states']} (minimal: {info['minimal_states']})",
        f"alphabet       {shown}",
        f"monoid size    {info['monoid_size'] if info['monoid_size'] is not None else 'over the cap'}",
        f"group          {'yes' if info['is_group'] else 'no'}",
        f"aperiodic      {'unknown' if info['aperiodic'] is None else ('yes' if info['aperiodic'] else 'no')}",
    ]
    g = info.get("group")
    if g:
        props = [f"order {g['order']}", "abelian" if g["abelian"] else "non-abelian",
                 "solvable" if g["solvable"] else "not solvable"]
        if g.get("min_perm_degree") is not None:
            props.append(f"minimal faithful permutation degree {g['min_perm_degree']}")
        lines.append(f"  structure    {g.get('name') or '(unnamed)'}: " + ", ".join(props))
    h = info.get("holonomy")
    if h:
        rule = f" (depth rule {h['depth_rule']})" if "depth_rule" in h else ""
        lines.append(f"holonomy       depth {h['depth']}{rule}")
        for i, level in enumerate(h.get("levels", []), 1):
            comps = ", ".join(f"{c['points']} points / group order {c['group_order']}" for c in level)
            lines.append(f"  level {i}      {comps or '(empty)'}")
    else:
        lines.append("holonomy       unavailable")
    return "\n".join(lines)
