"""``lrnnkit compile``: an automaton compiled into an LRNN model, or the applicable constructions with their costs
(``--explain``)."""
from __future__ import annotations

import json
import sys
from ..errors import InputError
from .convert import add_complete_flags, complete_of
from ..automata.sources import load_source
from ..certify import resource_profile
from ..cli_format import shown, table
from ..constructions import candidates, compile as compile_model
from ..constructions import get as get_construction
from ..limits import check_automaton
from ..progress import busy
from ._common import _print_json

ORDER = 20


def add_parser(sub) -> None:
    s = sub.add_parser("compile", help="compile an automaton into an LRNN model")
    s.add_argument("source", help="FSA JSON file or preset (as for `info`)")
    s.add_argument("--construction", help="construction name (see `lrnnkit constructions`); default: the applicable "
                   "one of least cost (total width, factors per token, layers; see --explain)")
    s.add_argument("--explain", action="store_true", help="print the applicable constructions with their costs, the "
                   "chosen one marked (the model is written only with -o)")
    s.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a construction option, e.g. split=class, refine=true or depth_rule=sgpdec-0.9.7 for krohn-rhodes "
                   "(VALUE is read as JSON when it parses, else as a string); see the construction's docs page")
    s.add_argument("-o", "--output", help="model file to write; - writes the model JSON to stdout (default: a "
                   "one-line summary, nothing written)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_complete_flags(s)


def run(a) -> int:
    fsa = load_source(a.source, complete=complete_of(a))
    check_automaton(fsa, "compile", a.source)
    options = {}
    for item in a.option:
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier():
            raise InputError(f"--option expects KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    if a.explain:
        return _explain(fsa, a, options)
    try:
        with busy("compile"):
            model = compile_model(fsa, a.construction, **options)
    except TypeError as exc:
        if options:
            raise InputError(f"bad construction option(s) {sorted(options)}: {exc}") from None
        raise
    prof = resource_profile(model)
    summary = {"construction": model.provenance.get("construction"), "automaton": fsa.name, **prof,
               "output": a.output}
    line = (f"{summary['construction']}, {prof['layers']} layer(s), widths {prof['widths']}, max factors per token "
            f"{prof['max_factors_per_token']}")
    if a.output == "-":             # the model itself on stdout, the summary on stderr
        print(json.dumps(model.to_json(), indent=1))
        print(f"lrnnkit: compiled {shown(fsa.name or a.source)}: {line}", file=sys.stderr)
    elif a.output:
        model.save(a.output)
        if a.json:
            _print_json(summary)
        else:
            print(f"wrote {a.output}: {line}")
    elif a.json:
        _print_json(summary)
    else:                           # no -o: what would be written, not the (possibly huge) JSON itself
        print(f"{shown(fsa.name or a.source)}: {line}; not written (-o FILE writes the model, -o - prints it)")
    return 0


def _explain(fsa, a, options) -> int:
    """``compile --explain``: the applicable constructions, cheapest first, with their costs (the chosen one
    marked), then the compile itself when ``-o`` is given."""
    if a.output == "-":
        raise InputError("compile --explain -o -: the table goes to stdout; give -o a file name")
    cands = candidates(fsa)
    chosen = get_construction(a.construction).name if a.construction else (cands[0][0].name if cands else None)
    rows = []
    for c, k in cands:
        rows.append({"name": c.name, "chosen": c.name == chosen, "paper": c.paper, "statement": c.statement,
                     "cost": k.to_json() if k is not None else None,
                     "cost_key": list(k.key()) if k is not None else None})
    if a.output:
        model = compile_model(fsa, a.construction, **options)
        model.save(a.output)
    if a.json:
        _print_json({"automaton": fsa.name, "chosen": chosen, "candidates": rows, "output": a.output,
                     "cost_order": ["non-GH layers", "total width", "factors per token", "layers", "-priority"]})
        return 0
    body = []
    for r in rows:
        k = r["cost"]
        if k is None:
            cells = ["?", "?", "?", "?", "not costed"]
        else:
            f = k["factors_per_token"]
            cells = [str(k["total_width"]), ",".join(map(str, k["widths"])), "-" if f is None else str(f),
                     str(k["layers"]), ("GH" if k["gh"] else "not GH") + ("" if k["source"] == "formula"
                                                                          else ", measured")]
        body.append(["*" if r["chosen"] else "", r["name"]] + cells + [f"{r['paper']} {r['statement']}"])
    print(f"applicable constructions for {shown(fsa.name or a.source)}, cheapest first (* = chosen)\n"
          f"cost, compared in this order: GH layers first, total width, factors per token, layers")
    print(table(["", "construction", "width", "widths", "factors", "layers", "kind", "paper"], body,
                shrink={7: 14, 3: 6}))
    for r in rows:
        if r["cost"] is None:
            print(f"{r['name']}: not built, since a GH construction with a cost formula applies; its widths\n"
                  f"  are known only after building it: --construction {r['name']} --explain -o FILE")
    if a.output:
        print(f"wrote {a.output}: {chosen}")
    return 0


VERBS = {"compile": run}
