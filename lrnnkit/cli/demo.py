"""``lrnnkit demo``: the end-to-end showcase (:mod:`lrnnkit.showcase.demo`): compile, certify, precision demos and the
HTML report, with the showcase's own switches (``--quiet``, ``--no-kernels``, ``--no-precision``)."""
from __future__ import annotations

import os
import sys
from ..showcase.demo import run_demo

ORDER = 80


def add_parser(sub) -> None:
    s = sub.add_parser("demo", help="the end-to-end showcase: compile, certify, precision demos, HTML report")
    s.add_argument("--out", default="demo_out", help="directory for report.html and summary.json (default demo_out)")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    s.add_argument("--no-kernels", action="store_true", help="skip the Triton layers")
    s.add_argument("--no-precision", action="store_true", help="skip the precision demos")


def run(a) -> int:
    summary = run_demo(a.out, progress=not a.quiet, kernels=not a.no_kernels, precision=not a.no_precision)
    if summary.get("incomplete"):
        print(f"lrnnkit: interrupted; the report in {a.out} is incomplete", file=sys.stderr)
    elif a.quiet:
        print(os.path.join(a.out, "report.html"))
    return int(summary.get("exit_status", 0))


VERBS = {"demo": run}
