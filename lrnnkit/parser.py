"""The command line's grammar: :func:`build_parser` builds the argparse parser of every verb and imports no verb's
implementation (the verbs run in :mod:`lrnnkit.cli`), so the docs generator can read it. Contract: ``docs/cli.rst``.
"""
from __future__ import annotations

import argparse

from ._version import __version__
from .limits import seed_arg
from .automata.bridges.cli import add_complete_flags
from .certify import DEFAULT_MAX_PAIRS
from .automata.bridges.cli import add_parser as _add_convert_parser
from .errors import InputError
from .export import add_parser as _add_export_parser
from .learn.cli import add_parser as _add_learn_parsers
from .learn.extract_cli import add_parser as _add_extract_parser
from .sweep.cli import add_parser as _add_sweep_parser

__all__ = ["build_parser"]


_JSON_HELP = "print machine-readable JSON (keys: docs/cli.rst) instead of text"
_FORMAT_HELP = ("number format: fp64, fp32, tf32, bf16, fp16, fp8-e4m3fn, fp8-e5m2, fp8-e4m3-ieee (max 240), "
                "fp6-e2m3fn, fp6-e3m2fn, fp4-e2m1fn, fp8-e8m0fnu, the fnuz formats, any ml_dtypes name "
                "(float8_e4m3fn, ...), or eXmY for X exponent and Y mantissa bits (e.g. e5m7); docs: formats")
_ROUNDING_HELP = ("rounding mode: nearest-even (default), nearest-away, toward-positive, toward-negative, "
                  "toward-zero, to-odd, stochastic (with --seed)")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage + message by default)
        raise InputError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line's parser.

    Long: every verb's flags, one block per verb in the order ``lrnnkit --help`` lists them."""
    p = _Parser(prog="lrnnkit", description="Linear RNNs and finite automata: certified constructions, "
                "Krohn-Rhodes compilation, finite-precision simulation, Triton kernels.")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--version", action="version", version=f"lrnnkit {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("info", help="structure of an automaton (monoid, group, holonomy)")
    s.add_argument("source", help="FSA JSON file or preset (parity, counter:M, group:NAME, flipflop, even-pairs, "
                   "cycle-nav:M, mod-arith:M, regex:PATTERN, transformations:[[...],...]), or a trained model "
                   "(checkpoint, run or pretrained directory: its description)")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--depth-rule", choices=["sgpdec", "sgpdec-0.9.7"], default="sgpdec",
                   help="holonomy levels: SgpDec >= 0.9.8's direct depth (default) or SgpDec <= 0.9.7's heights")
    add_complete_flags(s)

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

    s = sub.add_parser("verify", help="certify a model for inputs of every length (exit 0 iff certified)")
    s.add_argument("model", help="model JSON file (from `lrnnkit compile -o`), or a trained model (a `lrnnkit train "
                   "--out` directory, its checkpoint.json, a save_pretrained directory): checked up to --horizon")
    s.add_argument("--source", help="automaton to check against (default: the one recorded in the model)")
    s.add_argument("--horizon", type=int, default=None, metavar="N", help="trained models: check words up to "
                   "length N (default: the longest test length of its training); exit 1 iff a wrong word is found")
    s.add_argument("--max-pairs", type=int, default=DEFAULT_MAX_PAIRS, help="stop the exact search after this many "
                   f"(automaton state, model state) pairs (default {DEFAULT_MAX_PAIRS}): then not certified")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)

    s = sub.add_parser("run", help="run a model on a word")
    s.add_argument("model", help="model JSON file, or a trained model (checkpoint, run or pretrained directory)")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--word", help='space-separated symbols, e.g. "a b c"; over one-character symbols also a plain '
                   'string, e.g. "101"')
    g.add_argument("--random", type=int, metavar="N", help="a random word of length N: uniform letters, avoiding "
                   "letters that enter a trap state such as mod-arith's error state (see --uniform)")
    s.add_argument("--uniform", action="store_true", help="with --random: uniform letters, traps included (random "
                   "words over mod-arith's alphabet are then mostly ungrammatical)")
    s.add_argument("--seed", type=seed_arg, default=0, help="seed of the random word (default 0)")
    s.add_argument("--backend", choices=["reference", "exact", "torch", "triton"], default="reference",
                   help="reference: float64 numpy executor (default); exact: exact arithmetic; torch: torch layers; "
                   "triton: the Triton kernels (interpreter on CPU)")
    s.add_argument("--dtype", default=None, help="float64 (reference default) / float32 (torch, triton default) / "
                   "bfloat16 / float16")
    s.add_argument("--gh-mode", choices=["matrix", "factors"], default="matrix",
                   help="torch/triton: run GH layers as precomputed letter matrices (matrix, default) or factor by "
                   "factor through the GH kernel (factors)")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)

    s = sub.add_parser("constructions", help="the catalogue of constructions")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--long", action="store_true", help="full text of every entry instead of the table")

    s = sub.add_parser("theorems", help="the statement registry with verdicts")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)
    s.add_argument("--long", action="store_true", help="full text of every entry (statement, evidence, "
                   "counterexample, correction) instead of the table")
    s.add_argument("--check", metavar="ID", help="re-run the check of one statement and print its verdict")
    s.add_argument("--profile", choices=["quick", "deep"], default=None,
                   help="with --check: quick (default, seconds) or deep (larger searches)")
    s.add_argument("--perturbed", action="store_true",
                   help="with --check: also run the entry's perturbation (a nearby false statement) and print both "
                        "verdicts; exit 0 iff the recorded verdict is reproduced and the perturbation flips it")
    s.add_argument("--paper", action="append", metavar="NNN",
                   help="list only the entries of this paper (000 .. 004, or lrnnkit); may be repeated")
    s.add_argument("--verdict", action="append", choices=["holds", "falsified", "holds-as-corrected",
                                                          "holds-with-wording-slip", "open"],
                   help="list only the entries with this recorded verdict; may be repeated")

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

    s = sub.add_parser("demo", help="the end-to-end showcase: compile, certify, precision demos, HTML report")
    s.add_argument("--out", default="demo_out", help="directory for report.html and summary.json (default demo_out)")

    _add_export_parser(sub)

    _add_sweep_parser(sub)

    _add_learn_parsers(sub)

    _add_convert_parser(sub)
    _add_extract_parser(sub)
    return p
