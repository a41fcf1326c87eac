"""Text layout of the command line's tables (``lrnnkit constructions``, ``lrnnkit theorems``, ``compile
--explain``): aligned columns that fit the terminal, and labels with control characters shown escaped.

Hand-written rather than ``tabulate``/``rich``: the layout needs one rule only (shrink the widest free-text column
until the row fits, cutting with "..."), and the project keeps its runtime dependencies small.
"""
from __future__ import annotations

import os
import shutil
import sys
from contextlib import contextmanager

__all__ = ["terminal_width", "table", "shown", "shorten", "escaped", "EscapingStream", "escaping_terminal"]

MIN_WIDTH = 60
DEFAULT_WIDTH = 100


def terminal_width() -> int:
    """Columns available: ``$COLUMNS`` or the terminal's width (100 when not a terminal), at least 60."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return max(MIN_WIDTH, int(env))
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def shown(text) -> str:
    """``text`` with control characters (ANSI escapes, newlines, tabs, DEL, C1 controls) written as Python escapes,
    so a label can neither recolour nor move the terminal's cursor: ``"\\x1b[31mred"`` prints as ``\\x1b[31mred``."""
    return escaped(text)


def escaped(text, keep: str = "") -> str:
    """``text`` with every character that is not printable (C0/C1 controls, ESC, DEL, format characters such as
    the bidi override U+202E, line separators, lone surrogates) written as a Python escape, except those in
    ``keep``: what reaches a terminal can neither recolour it, retitle it, move its cursor nor reorder a line."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() or ch in keep else ch.encode("unicode_escape", "backslashreplace")
                   .decode("ascii") for ch in s)


class EscapingStream:
    """A text stream that passes everything written through :func:`escaped` (keeping ``keep``) to ``raw``; every
    other attribute (``isatty``, ``fileno``, ``flush``, ``encoding``, ``buffer``) is ``raw``'s."""

    def __init__(self, raw, keep: str):
        self.raw, self._keep = raw, keep

    def write(self, s: str) -> int:
        self.raw.write(escaped(s, self._keep))
        return len(s)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self.raw, name)


@contextmanager
def escaping_terminal():
    """While active, ``sys.stdout`` and ``sys.stderr`` escape what is written to them (the command line runs every
    verb inside it). stdout keeps newlines and tabs; stderr also keeps the carriage return that progress bars
    (tqdm) draw with. Error lines are escaped in full by the caller."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = EscapingStream(out, "\n\t") if out is not None else out
    sys.stderr = EscapingStream(err, "\n\t\r") if err is not None else err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in "..." when cut."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    return text[:max(width - 3, 0)] + "..." if width > 3 else text[:width]


def table(headers: list, rows: list, *, width: int | None = None, shrink=(), sep: str = "  ") -> str:
    """Rows aligned under ``headers``, every line at most ``width`` columns (the terminal's by default).

    ``shrink`` names the free-text columns that may give up characters: a tuple of column indices, or a dict
    ``{index: least width}`` (default 8). The one with the most characters above its least width loses one at a
    time until the table fits; a shrunk cell or header ends in "...". Other columns keep their full width, so a
    table can stay wider than ``width`` when those alone do not fit."""
    width = terminal_width() if width is None else width
    cells = [[shown(c) for c in r] for r in rows]
    ncol = len(headers)
    w = [max([len(str(headers[j]))] + [len(" ".join(r[j].split())) for r in cells]) for j in range(ncol)]
    floors = dict(shrink) if isinstance(shrink, dict) else {j: 0 for j in shrink}
    floors = {j: (f or 8) for j, f in floors.items() if 0 <= j < ncol}
    total = sum(w) + len(sep) * (ncol - 1)
    while total > width:
        free = [j for j in floors if w[j] > floors[j]]
        if not free:
            break
        j = max(free, key=lambda k: w[k] - floors[k])
        w[j] -= 1
        total -= 1
    lines = [sep.join(shorten(str(h), w[j]).ljust(w[j]) for j, h in enumerate(headers)).rstrip(),
             sep.join("-" * w[j] for j in range(ncol))]
    for r in cells:
        lines.append(sep.join(shorten(r[j], w[j]).ljust(w[j]) for j in range(ncol)).rstrip())
    return "\n".join(lines)
