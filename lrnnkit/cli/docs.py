"""``lrnnkit docs [OUT_DIR]``: the generated documentation pages (:mod:`lrnnkit.showcase.docgen`: constructions,
theorem registry, API) and the command-line reference, every verb's ``--help`` as argparse prints it
(:func:`help_pages`); ``--figures DIR`` draws the documentation's static pictures (:mod:`lrnnkit.showcase.figures`)
instead. ``make docs`` runs it before Sphinx."""
from __future__ import annotations

import argparse
import os
import sys
from ..showcase.docgen import generate
from ..showcase.figures import write_all
from .main import build_parser

ORDER = 140
#: the width the help texts are wrapped to on the reference page
HELP_COLUMNS = "100"


def add_parser(sub) -> None:
    s = sub.add_parser("docs", help="generate the documentation pages (constructions, theorems, CLI, API)")
    s.add_argument("out_dir", nargs="?", default=os.path.join("docs", "generated"),
                   help="directory for the generated pages (default docs/generated)")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    s.add_argument("--figures", metavar="DIR", help="draw the static pictures into DIR (docs/_static) instead")


def _help(parser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        return parser.format_help().rstrip()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def help_pages() -> list:
    """``[(title, depth, help text)]``: ``lrnnkit --help`` (depth -1), then every verb (depth 0) and subcommand
    (depth 1), as argparse prints them."""
    p = build_parser()
    pages = [("lrnnkit", -1, _help(p))]

    def walk(parser, prefix: str, depth: int):
        for action in parser._actions:  # argparse keeps subcommands in a private action; no public accessor
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    pages.append((f"{prefix} {name}", depth, _help(sub)))
                    walk(sub, f"{prefix} {name}", depth + 1)

    walk(p, "lrnnkit", 0)
    return pages


def run(a) -> int:
    if a.figures:
        for p in write_all(a.figures):
            print(p)
        return 0
    res = generate(a.out_dir, progress=not a.quiet, cli_help=help_pages)
    n = len(res["constructions"])
    print(f"docgen: {n} construction page(s), {res['theorems'].get('count', 0)} statement(s), "
          f"{len(res['api'].get('modules', []))} module(s) in {res['seconds']} s -> {a.out_dir}", file=sys.stderr)
    for w in res["warnings"]:
        print(f"docgen: warning: {w}", file=sys.stderr)
    for e in res["errors"]:
        print(f"docgen: error: {e}", file=sys.stderr)
    return 0 if res["ok"] else 1


VERBS = {"docs": run}
