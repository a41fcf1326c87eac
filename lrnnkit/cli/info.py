"""``lrnnkit info``: the structure of an automaton (monoid, group, holonomy) or a trained model's description."""
from __future__ import annotations

from .convert import add_complete_flags, complete_of
from ..automata.info import MONOID_CAP, describe
from ..automata.sources import load_source
from ..cli_format import shown
from . import _trained as trained_verbs
from ..limits import check_automaton
from ..progress import busy
from ._common import _JSON_HELP, _print_json, _trained

ORDER = 10


def add_parser(sub) -> None:
    s = sub.add_parser("info", help="structure of an automaton (monoid, group, holonomy)")
    s.add_argument("source", help="FSA JSON file or preset (parity, counter:M, group:NAME, flipflop, even-pairs, "
                   "cycle-nav:M, mod-arith:M, regex:PATTERN, transformations:[[...],...]), or a trained model "
                   "(checkpoint, run or pretrained directory: its description)")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--depth-rule", choices=["sgpdec", "sgpdec-0.9.7"], default="sgpdec",
                   help="holonomy levels: SgpDec >= 0.9.8's direct depth (default) or SgpDec <= 0.9.7's heights")
    add_complete_flags(s)


def run(a) -> int:
    if _trained(a.source):
        return trained_verbs.info(a)
    fsa = load_source(a.source, complete=complete_of(a))
    check_automaton(fsa, "info", a.source)      # sizes checked before the analysis starts (lrnnkit.limits)
    with busy("info: monoid, group, holonomy"):
        d = describe(fsa, depth_rule=a.depth_rule)
    if a.json:
        _print_json(d)
        return 0
    alph = [shown(x) for x in d["alphabet"]]
    print(f"states {d['states']} (minimal {d['minimal_states']}), alphabet of {len(alph)}: "
          f"{' '.join(alph[:12])}{' ...' if len(alph) > 12 else ''}")
    size = (f"{d['monoid_size']} elements" if d["monoid_size"] is not None
            else f"monoid too large to enumerate (limit {MONOID_CAP:,} elements)")
    aper = d["aperiodic"] if d["aperiodic"] is not None else "unknown (monoid not enumerated)"
    print(f"transition monoid: {size}; group: {d['is_group']}; aperiodic: {aper}")
    g = d.get("group")
    if g:
        print(f"group {g.get('name') or '?'}: order {g['order']}, abelian {g['abelian']}, solvable {g['solvable']}, "
              f"minimal faithful permutation degree {g['min_perm_degree']}")
    h = d.get("holonomy")
    if h:
        print(f"holonomy decomposition: depth {h['depth']} (depth rule {h.get('depth_rule', 'sgpdec')})")
        for i, lev in enumerate(h["levels"], 1):
            comps = ", ".join(f"{c['points']} points / group of order {c['group_order']}" for c in lev)
            print(f"  level {i}: {comps or '(no nontrivial component)'}")
    return 0


VERBS = {"info": run}
