"""``lrnnkit verify``: a model certified for inputs of every length (exit 0 iff certified)."""
from __future__ import annotations

from ..errors import InputError
from ..automata.sources import load_source
from ..certify import DEFAULT_MAX_PAIRS, certify
from ..cli_format import shown
from . import _trained as trained_verbs
from .. import limits
from ..limits import check_int
from ._common import _JSON_HELP, _load_model, _print_json, _trained

ORDER = 30


def add_parser(sub) -> None:
    s = sub.add_parser("verify", help="certify a model for inputs of every length (exit 0 iff certified)")
    s.add_argument("model", help="model JSON file (from `lrnnkit compile -o`), or a trained model (a `lrnnkit train "
                   "--out` directory, its checkpoint.json, a save_pretrained directory): checked up to --horizon")
    s.add_argument("--source", help="automaton to check against (default: the one recorded in the model)")
    s.add_argument("--horizon", type=int, default=None, metavar="N", help="trained models: check words up to "
                   "length N (default: the longest test length of its training); exit 1 iff a wrong word is found")
    s.add_argument("--max-pairs", type=int, default=DEFAULT_MAX_PAIRS, help="stop the exact search after this many "
                   f"(automaton state, model state) pairs (default {DEFAULT_MAX_PAIRS}): then not certified")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)


def run(a) -> int:
    if _trained(a.model):
        return trained_verbs.verify(a)
    if a.horizon is not None:
        raise InputError("--horizon is for trained models; a compiled model is certified for every length")
    check_int("--max-pairs", a.max_pairs, 1, limits.MAX_PAIRS_LIMIT, "MAX_PAIRS_LIMIT")
    model = _load_model(a.model)
    fsa = load_source(a.source) if a.source else None
    cert = certify(model, fsa, max_pairs=a.max_pairs)
    if a.json:
        _print_json(cert.to_json())
    else:
        status = "CERTIFIED for all input lengths" if cert.certified else "NOT certified"
        print(f"{status} ({cert.method}): {cert.reason}")
        print(f"  reachable (automaton state, model state) pairs: {cert.reachable_states}; "
              f"transitions checked: {cert.explored_transitions}")
        print(f"  layers {cert.layers}, widths {cert.widths}, max factors per token {cert.max_factors_per_token}, "
              f"GH factors with beta in [0,2]: {cert.eigenvalues_in_unit_interval}")
        if cert.counterexample is not None:
            print(f"  shortest counterexample: {' '.join(shown(x) for x in cert.counterexample)} "
                  f"(expected {shown(cert.expected)}, got {shown(cert.got)})")
        if cert.float_check:
            fc = cert.float_check
            print(f"  float64 cross-check: {fc['words']} random words x {fc['steps']} steps, {fc['mismatches']} mismatches")
    return 0 if cert.certified else 1


VERBS = {"verify": run}
