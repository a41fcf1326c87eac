"""Compiled versus learned, side by side, for every learning experiment (``lrnnkit experiment --list``).

For each experiment and task: the compiled model's certified cost (``lrnnkit.compile`` = the cheapest applicable
construction, ``lrnnkit.certify``: construction, layers, total width, GH factors per token) beside the smallest
trained model among the stored runs (``benchmarks/results/learning/*.json``) that reaches the experiment's target
(:mod:`lrnnkit.learn.compiled_vs_learned`). CPU only, about half a minute (certifying Z60 and A5 dominates).

    python benchmarks/compiled_vs_learned.py            # print the table
    python benchmarks/compiled_vs_learned.py --record   # and write section "learning: compiled versus learned"
    python benchmarks/compiled_vs_learned.py --rst      # the table as reStructuredText (docs/learning.rst)
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks._record import record, table  # noqa: E402
from lrnnkit.learn.compiled_vs_learned import compare  # noqa: E402
from lrnnkit.learn.experiments import EXPERIMENTS  # noqa: E402

SECTION = "learning: compiled versus learned"
RESULTS_DIR = os.path.join(HERE, "results", "learning")


def load_records(folder: str = RESULTS_DIR) -> list:
    """The stored experiment records: JSON files with an experiment's ``name`` and a ``runs`` dict."""
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        if isinstance(d, dict) and d.get("name") in EXPERIMENTS and isinstance(d.get("runs"), dict):
            out.append(d)
    return out


def _heads(f: dict) -> str:
    if f["layer"] == "diagonal":
        return "-"
    if f["layer"] == "block-diagonal":
        return f"blocks of {f['block_size']}"
    return f"{f['heads']} x {f['head_dim']}"


def _nh(f: dict) -> str:
    return str(f["n_h"]) if f["layer"] in ("deltanet", "deltaproduct", "fixed-point") else "-"


def _compiled_cells(row: dict) -> list:
    c = row["compiled"]
    if c is None:
        return [row["no_automaton"], "-", "-", "-", "-", "-"]
    widths = "+".join(map(str, c["widths"]))
    return [f"{c['construction']} ({c['states']} states, {c['letters']} letters)", c["layers"],
            f"{c['total_width']} ({widths})" if c["layers"] > 1 else str(c["total_width"]),
            c["factors_per_token"] if c["factors_per_token"] is not None else "-",
            "yes" if c["certified"] else "NO", f"{c['compile_s'] + c['certify_s']:.1f}"]


def _learned_cells(row: dict) -> list:
    f = row["reached"]
    if row["runs"] == 0:
        return ["no stored runs"] + ["-"] * 8
    if f is None:
        b = row["best"]
        best = f"best {b['value']:.3f}: {b['label']}" if b else "no run has the metric"
        return [f"none reached it at this scale ({row['runs']} run{'s' if row['runs'] > 1 else ''}; {best})"] + ["-"] * 8
    p = f"{f['parameters']:,}" if f["parameters"] is not None else "not stored"
    return [f"{f['label']} [{f['scale']}]", f["layer"], f["width"], f["layers"], _heads(f), _nh(f), p, f["steps"],
            f"{f['value']:.3f}"]


HEADERS = ["experiment", "task", "target", "compiled (default construction)", "layers", "total width (widths)",
           "GH factors/token", "certified", "compile + certify (s)", "smallest stored run reaching the target",
           "layer", "width", "layers", "heads x head_dim", "n_h", "parameters", "steps", "measured"]


def markdown_rows(rows: list) -> list:
    return [[r["experiment"], f"`{r['task']}`", r["target"].text] + _compiled_cells(r) + _learned_cells(r)
            for r in rows]


def rst(rows: list) -> str:
    """A list-table: experiment, task, compiled cost, smallest trained run reaching the target."""
    out = [".. list-table::", "   :header-rows: 1", "   :widths: 14 12 30 44", "",
           "   * - experiment", "     - task", "     - compiled (layers, total width, GH factors/token)",
           "     - smallest stored run reaching the target"]
    for r in rows:
        c = r["compiled"]
        comp = (r["no_automaton"] if c is None else
                f"{c['construction']}: {c['layers']}, {c['total_width']}, {c['factors_per_token']}")
        f = r["reached"]
        if r["runs"] == 0:
            learned = "no stored runs"
        elif f is None:
            b = r["best"]
            learned = f"none reached it at this scale (best {b['value']:.2f})" if b else "none reached it"
        else:
            p = f"{f['parameters']:,} parameters" if f["parameters"] is not None else "parameters not stored"
            nh = f", n_h {f['n_h']}" if _nh(f) != "-" else ""
            hd = f", {_heads(f)}" if _heads(f) != "-" else ""
            learned = (f"{f['layer']}, {f['layers']} x width {f['width']}{hd}{nh}, {p}, {f['steps']} steps "
                       f"({f['scale']}): {f['value']:.2f}")
        out += [f"   * - ``{r['experiment']}``", f"     - ``{r['task']}``", f"     - {comp}", f"     - {learned}"]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help=f"write section {SECTION!r} of benchmarks/RESULTS.md")
    ap.add_argument("--rst", action="store_true", help="print the table as reStructuredText")
    args = ap.parse_args()
    experiments = {name: [cfg.task for _, cfg in e.runs("small")] for name, e in EXPERIMENTS.items()}
    rows = compare(experiments, load_records())
    body = table(HEADERS, markdown_rows(rows))
    notes = ("Compiled: `lrnnkit.compile(fsa)` (the cheapest applicable construction) and `lrnnkit.certify` "
             "(exact, every length); total width = the sum of the layer widths (the recurrent state's size); GH "
             "factors/token = the certificate's max_factors_per_token. S5-swaps: group:S5 restricted to the task's "
             "letters (the identity and the 10 transpositions). Learned: the stored runs of "
             "benchmarks/results/learning/*.json (runs and superseded runs, every scale; 001-fla-anchor is not an "
             "experiment and is left out), the smallest by (layers x width, n_h, steps, parameters) among those "
             "whose measured value reaches the target: the experiment's own criterion where it states an absolute "
             "one, else token accuracy >= 0.9 at the longest test length. The runs are small-scale (60-300 s per "
             "run on one GPU, or seconds on a CPU): \"smallest\" is among what ran, not the smallest model that "
             "can learn the task. Reproduce: `python benchmarks/compiled_vs_learned.py --record`.")
    if args.rst:
        print(rst(rows))
    elif args.record:
        record(SECTION, body, notes)
    else:
        print(body)


if __name__ == "__main__":
    main()
