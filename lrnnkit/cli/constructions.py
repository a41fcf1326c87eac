"""``lrnnkit constructions``: the catalogue of constructions."""
from __future__ import annotations

from ..cli_format import table
from ..constructions import catalogue
from ._common import _JSON_HELP, _print_json

ORDER = 50


def add_parser(sub) -> None:
    s = sub.add_parser("constructions", help="the catalogue of constructions")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--long", action="store_true", help="full text of every entry instead of the table")


def run(a) -> int:
    cat = [c.to_json() for c in catalogue()]
    if a.json:
        _print_json(cat)
    elif a.long:
        for c in cat:
            print(f"{c['name']} (paper {c['paper']}, {c['statement']})" +
                  (f", variant of {c['variant_of']}" if c["variant_of"] else ""))
            for key in ("applies_to", "layers", "width", "factors_per_token", "notes"):
                if c.get(key):
                    print(f"  {key.replace('_', ' ')}: {c[key]}")
    else:
        rows = [[c["name"], f"{c['paper']} {c['statement']}", c["layers"], c["width"], c["factors_per_token"]]
                for c in cat]
        print(table(["name", "paper, statement", "layers", "width", "factors/token"], rows,
                    shrink={1: 18, 2: 6, 3: 8, 4: 12}))
        print("(full text: --long or --json; costs for one automaton: compile SOURCE --explain)")
    return 0


VERBS = {"constructions": run}
