"""Readable labels on a heat map: every cell gets its text in the colour that contrasts with the cell's own colour.

:func:`label_cells` writes ``labels[i][j]`` at cell (i, j) of an ``imshow`` image: white on dark cells, black on
light ones, decided from the relative luminance of the colour the image actually draws there (ITU-R BT.709
weights on the colormap's RGB), so it holds for any colormap and direction (``viridis`` and ``viridis_r`` alike).
Cells without a value (NaN / masked) are drawn in ``empty_color`` and labelled in bold dark green; the caller says
what an empty cell means ("never wrong", "none within N").
"""
from __future__ import annotations

import math

__all__ = ["label_cells", "text_color", "short_count"]


def text_color(rgba) -> str:
    """"white" on a dark colour, "black" on a light one (relative luminance below / above 0.5)."""
    r, g, b = rgba[:3]
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 else "black"


def short_count(n) -> str:
    """A step count in at most 7 characters: 950, 12.3k, 340k, 3.4M, 1.2e+09."""
    if n is None:
        return ""
    n = int(n)
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.0f}k" if n >= 100_000 else f"{n / 1000:.3g}k"
    if n < 10 ** 9:
        return f"{n / 1e6:.3g}M"
    return f"{n:.1e}"


def label_cells(ax, im, values, labels, fontsize: float = 7, empty_color: str = "white",
                empty_text: str = "#1b5e20") -> None:
    """Label every cell of the image ``im`` (drawn on ``ax`` from ``values``, a 2-D array) with ``labels[i][j]``
    in a contrasting colour; empty cells (NaN) get the background ``empty_color`` and bold ``empty_text``
    labels (dark green on white: no wrong step is the good news)."""
    import matplotlib.pyplot as plt
    for i, row in enumerate(labels):
        for j, text in enumerate(row):
            v = values[i][j]
            empty = v is None or (isinstance(v, float) and math.isnan(v))
            if empty:
                ax.add_patch(plt.Rectangle((j - .5, i - .5), 1, 1, color=empty_color, zorder=1))
                color = empty_text
            else:
                color = text_color(im.cmap(im.norm(v)))
            if text:
                ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, color=color, zorder=2,
                        fontweight="bold" if empty else "normal")
