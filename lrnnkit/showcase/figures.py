"""The documentation's static pictures, each drawn by lrnnkit's own code: ``lrnnkit docs --figures
docs/_static`` writes them again.

* ``formats_number_lines.png`` (docs/formats.rst): every positive finite value of fp16, bf16, the two OCP FP8
  formats, FP6 E2M3 and FP4 E2M1 (:meth:`lrnnkit.precision.formats.FloatFormat.all_values`) on one logarithmic
  axis, with the format's machine epsilon: how far apart neighbours are is what makes a long product drift.
* ``krohn_rhodes_wiring.png`` (docs/algorithms.rst): the layers of the Krohn-Rhodes model of ``mod-arith:3``
  and what each reads (:func:`lrnnkit.showcase.wiring.wiring_figure`; 000, Theorem 4).
* ``theorem1_trajectories.png`` (docs/concepts.rst): the bf16 trajectories of 000, Theorem 1
  (:func:`lrnnkit.precision.demos.plot_theorem1`).
"""
from __future__ import annotations

import os


from ..automata.sources import load_source
from ..constructions import compile as compile_model
from ..fileio import make_dir, save_figure
from ..precision.demos import plot_theorem1
from ..precision.formats import get_format
from .report import figure
from .wiring import wiring_figure

__all__ = ["NUMBER_LINE_FORMATS", "number_lines_figure", "write_all"]

NUMBER_LINE_FORMATS = ("fp16", "bf16", "fp8-e4m3fn", "fp8-e5m2", "fp6-e2m3fn", "fp4-e2m1fn")


def number_lines_figure(formats=NUMBER_LINE_FORMATS):
    """Left: each format's positive finite range, smallest subnormal to largest value (log axis), labelled with its
    number of positive values and machine epsilon. Right: every value in [1, 2) (linear axis): the spacing a
    product of matrices near the identity has to live with."""
    fig = figure(8.0, 0.5 * len(formats) + 1.1)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for row, name in enumerate(formats):
        f = get_format(name)
        v = f.all_values()
        v = v[v > 0]
        y = len(formats) - 1 - row
        left.hlines(y, float(v.min()), float(v.max()), lw=5, color="#3c78b4")
        left.text(float(v.min()), y + 0.3, f"{v.size} values, eps {f.epsilon:g}", fontsize=6.5, va="bottom")
        w = v[(v >= 1) & (v < 2)]
        right.vlines(w, y - 0.3, y + 0.3, lw=0.3 if w.size > 200 else 0.9, color="#3c78b4")
        right.text(2.02, y, str(w.size), fontsize=6.5, va="center")
    for ax in (left, right):
        ax.set_yticks(range(len(formats)))
        ax.set_yticklabels(list(reversed(formats)), fontsize=7.5)
        ax.set_ylim(-0.6, len(formats) - 0.1)
        ax.tick_params(axis="x", labelsize=7)
    left.set_xscale("log", base=2)
    left.set_title("positive finite range (log scale)", fontsize=8.5)
    right.set_xlim(0.98, 2.12)
    right.set_title("the values in [1, 2) (count at the right)", fontsize=8.5)
    fig.tight_layout()
    return fig


def write_all(out_dir: str) -> list:
    """Write the three pictures into ``out_dir``; the paths written."""
    make_dir(out_dir)
    paths = []
    p = os.path.join(out_dir, "formats_number_lines.png")
    save_figure(number_lines_figure(), p)
    paths.append(p)
    model = compile_model(load_source("mod-arith:3"), "krohn-rhodes")
    p = os.path.join(out_dir, "krohn_rhodes_wiring.png")
    save_figure(wiring_figure(model, "krohn-rhodes on mod-arith:3"), p)
    paths.append(p)
    paths.append(plot_theorem1(out_dir))
    return paths
