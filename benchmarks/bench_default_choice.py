"""The default construction's choice: choosing by the cost formulas vs building every candidate.

``lrnnkit.constructions.choose`` ranks the applicable constructions by cost (GH layers first, total width, factors
per token, layers) from each construction's resource formula, without building them; only a construction without a
formula (krohn-rhodes) is built, and only when no GH construction with a formula applies. The peer is the naive
way: build every applicable construction and measure it (``candidates(fsa, build_all=True)``). Both must choose the
same construction; the table gives both times and their ratio. Records section "default construction" of
benchmarks/RESULTS.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks._record import record, table  # noqa: E402
from lrnnkit.automata.sources import load_source  # noqa: E402
from lrnnkit.constructions import candidates, choose  # noqa: E402

SOURCES = ["group:D8", "group:S4", "group:S5", "group:A5", "group:Z12", "even-pairs", "mod-arith:5"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    rows = []
    choose(load_source("parity"))              # warm-up: imports and the registry's loading are not timed
    for src in SOURCES:
        fsa = load_source(src)                  # fresh automaton: no cached group analysis
        t0 = time.perf_counter()
        chosen = choose(fsa)
        t_choose = time.perf_counter() - t0
        cost = dict((c.name, k) for c, k in candidates(fsa))[chosen.name]
        fsa = load_source(src)
        t0 = time.perf_counter()
        built = candidates(fsa, build_all=True)
        t_all = time.perf_counter() - t0
        assert built[0][0].name == chosen.name, (src, built[0][0].name, chosen.name)
        rows.append([src, chosen.name, f"{cost.total_width} ({'+'.join(map(str, cost.widths))})",
                     cost.factors_per_token, len(built), f"{t_choose:.2f}", f"{t_all:.2f}",
                     f"{t_all / max(t_choose, 1e-9):.1f}x"])
        print(" | ".join(map(str, rows[-1])), flush=True)
    body = table(["source", "chosen", "total width (widths)", "factors/token", "candidates", "choose (s)",
                  "build all (s)", "build all / choose"], rows)
    notes = ("choose = applicability checks + cost formulas (krohn-rhodes built only when no GH construction with "
             "a formula applies); build all = every applicable construction built and measured (krohn-rhodes "
             "included). Both pick the same construction (asserted). One run each, wall clock, fresh automata.")
    if args.no_record:
        print(body)
    else:
        record("default construction", body, notes)


if __name__ == "__main__":
    main()
