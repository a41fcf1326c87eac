"""The wiring of a compiled model as a picture: one box per layer (its name, kind, width and number of layer
symbols), the input token below, and an arrow for every value a layer's input map reads (``Layer.input_map.reads``:
the input token or a layer's output, at a lag). For a Krohn-Rhodes cascade (000, Theorem 4, built by
:mod:`lrnnkit.constructions.krohn_rhodes`) this draws the cascade product: each level reads the input and the
previous step's states of the levels above it (lag 1), which is the wiring the printed proof gets wrong (lag 0).
"""
from __future__ import annotations

from .report import figure

__all__ = ["wiring_figure"]


def wiring_figure(model, title: str = ""):
    """A matplotlib Figure of ``model``'s layers and reads (module docstring); layers bottom to top in order. Each
    read is a route of its own: out of the source's side, up, into the reader's side (the input on the left, layers
    on the right); a lagged read is dashed and labelled."""
    layers = list(model.layers)
    n = len(layers)
    fig = figure(5.2, 0.6 + 0.85 * (n + 1))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.5, n + 0.45)
    ax.axis("off")
    left, right = 3.5, 6.5                 # the boxes' sides
    y_of = {"input": 0.0}
    ax.text(5, 0, "input token", ha="center", va="center", fontsize=9,
            bbox=dict(boxstyle="round,pad=0.3", fc="#eeeeee", ec="#777777"))
    for i, L in enumerate(layers):
        y_of[i] = i + 1.0
        label = f"layer {i}" + (f": {L.name}" if L.name else "") + f"\n{L.kind}, width {L.width}, " \
                f"{L.n_symbols} symbol{'s' if L.n_symbols != 1 else ''}"
        ax.text(5, i + 1.0, label, ha="center", va="center", fontsize=7.5, linespacing=1.1,
                bbox=dict(boxstyle="round,pad=0.35", fc="#dbe9f6", ec="#3c78b4"))
    k_left = k_right = 0
    for i, L in enumerate(layers):
        for r in L.input_map.reads:
            src = "input" if r.source == "input" else int(r.source)
            y0, y1 = y_of[src] + 0.08, y_of[i] - 0.08
            if src == "input":
                x, edge, k_left = left - 0.4 - 0.35 * k_left, left, k_left + 1
            else:
                x, edge, k_right = right + 0.4 + 0.45 * k_right, right, k_right + 1
            color = "#b45309" if r.lag else "#555555"
            ls = "--" if r.lag else "-"
            ax.plot([edge, x, x], [y0, y0, y1], color=color, ls=ls, lw=1.0)
            ax.annotate("", xy=(edge, y1), xytext=(x, y1),
                        arrowprops=dict(arrowstyle="->", color=color, lw=1.0, ls=ls))
            if r.lag:
                ax.text(x + 0.08, (y0 + y1) / 2, f"lag {r.lag}", fontsize=6.5, color=color, va="center")
    ax.set_title(title or "layers and what each reads (dashed: the previous step's value)", fontsize=9)
    return fig
