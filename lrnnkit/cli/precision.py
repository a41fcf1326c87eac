"""``lrnnkit precision cast | collapse | impossibility``: finite-precision tools."""
from __future__ import annotations

import sys
from .. import precision as P
from ..cli_format import table, terminal_width
from . import _trained as trained_verbs
from .. import limits
from ..limits import check_int
from ..precision.simulate import DEFAULT_COLLAPSE_STEPS
from ._common import _FORMAT_HELP, _JSON_HELP, _ROUNDING_HELP, _Parser, _load_model, _print_json, _trained, seed_arg

ORDER = 70


def add_parser(sub) -> None:
    s = sub.add_parser("precision", help="finite-precision tools")
    psub = s.add_subparsers(dest="pcmd", metavar="SUBCOMMAND", parser_class=_Parser)
    psub.required = True
    c = psub.add_parser("cast", help="round values into a number format (exact decimal output)")
    c.add_argument("values", nargs="+", help="decimals, fractions (1/3), inf, nan, -0 or expressions (1/sqrt(2), "
                   "2**-3, pi/4, cos(2*pi/5)); negative values may stand anywhere, `--` is optional")
    c.add_argument("--format", required=True, dest="fmt", help=_FORMAT_HELP)
    c.add_argument("--rounding", default="nearest-even", help=_ROUNDING_HELP)
    c.add_argument("--seed", type=seed_arg, default=0, help="seed of stochastic rounding (default 0)")
    c.add_argument("--json", action="store_true", help=_JSON_HELP)
    c = psub.add_parser("collapse", help="first step at which a model goes wrong in a format")
    c.add_argument("model", help="model JSON file, or a trained model (run in a torch dtype: fp64 fp32 bf16 fp16)")
    c.add_argument("--format", required=True, dest="fmt", help=_FORMAT_HELP)
    c.add_argument("--policy", default="matvec", metavar="{op,matvec,proof}",
                   help="where rounding happens: op (after every elementary operation), matvec (after every "
                   "matrix-vector product, the default), proof (paper 000, App. A.3/B.1: products exact, each term "
                   "cast, the sum cast)")
    c.add_argument("--rounding", default="nearest-even", help=_ROUNDING_HELP)
    c.add_argument("--length", type=int, default=None, help="length of the input word to simulate "
                   "(default 100000; 4096 for a trained model)")
    c.add_argument("--steps", type=int, dest="length_old", default=None, metavar="N",
                   help="the old name of --length (prints a warning; --steps counts optimizer steps elsewhere)")
    c.add_argument("--seed", type=seed_arg, default=0, help="seed of the random input word and of stochastic rounding "
                   "(default 0)")
    c.add_argument("--json", action="store_true", help=_JSON_HELP)
    c = psub.add_parser("impossibility", help="the Theorem 1 / Theorem 2 demos (paper 000)")
    c.add_argument("--out", default="impossibility_out", help="directory for the plots (default impossibility_out)")
    c.add_argument("--json", action="store_true", help=_JSON_HELP)


def run(a) -> int:
    if a.pcmd == "cast":
        res = P.cli_cast(a.values, a.fmt, a.rounding, a.seed)
        if a.json:
            _print_json(res)
        else:
            for x, y in zip(res["inputs"], res["outputs"]):
                print(f"{x} -> {y}")
        return 0
    if a.pcmd == "collapse":
        if a.length_old is not None:     # --steps is training's word for optimizer steps; here it was the length
            print("lrnnkit: warning: precision collapse --steps is now --length (the word's length)", file=sys.stderr)
            a.length = a.length_old
        if _trained(a.model):
            return trained_verbs.collapse(a)
        a.length = DEFAULT_COLLAPSE_STEPS if a.length is None else a.length
        check_int("--length", a.length, 1, limits.COLLAPSE_MAX_STEPS, "COLLAPSE_MAX_STEPS")
        res = P.cli_collapse(_load_model(a.model), a.fmt, a.policy, a.length, a.rounding, seed=a.seed)
        if a.json:
            _print_json(res)
        else:
            print(P.collapse_text(res))
        return 0
    res = P.cli_impossibility(a.out)
    if a.json:
        _print_json(res)
    else:
        _print_impossibility(res)
    return 0


def _print_impossibility(res, indent: str = "") -> None:
    """The impossibility demo's result as text: ``key: value`` lines, nested dicts indented, lists of records as
    aligned tables (a nested ``{"pre_period": p, "period": q}`` cell prints as ``p+q``: pre-period + period)."""
    import textwrap

    def cell(v):
        if isinstance(v, dict):
            if set(v) == {"pre_period", "period"}:
                return "none" if v["period"] is None else f"{v['pre_period']}+{v['period']}"
            return " ".join(f"{k}={cell(x)}" for k, x in v.items())
        if isinstance(v, list):
            return "[" + ", ".join(cell(x) for x in v) + "]"
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 7:
            return f"{v:.3g}"
        return "-" if v is None else str(v)

    for k, v in res.items():
        if isinstance(v, dict):
            print(f"{indent}{k}:")
            _print_impossibility(v, indent + "  ")
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            keys = list(dict.fromkeys(kk for x in v for kk in x))
            print(f"{indent}{k}: ({len(v)} rows; pre+period = steps before the periodic part + its period)")
            body = table(keys, [[cell(x.get(kk)) for kk in keys] for x in v],
                         width=terminal_width() - len(indent) - 2,
                         shrink={j: (16 if j == 0 else 6) for j in range(len(keys))})
            print(textwrap.indent(body, indent + "  "))
        else:
            text = f"{k}: {cell(v) if isinstance(v, list) else v}"
            print(textwrap.fill(text, width=terminal_width(), initial_indent=indent,
                                subsequent_indent=indent + "    "))


VERBS = {"precision": run}
