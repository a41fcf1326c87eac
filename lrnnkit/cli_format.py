"""Text layout of the command line's tables (``lrnnkit constructions``, ``lrnnkit theorems``, ``compile
--explain``): aligned columns that fit the terminal, and labels with control characters shown escaped.

Hand-written rather than ``tabulate``/``rich``, and as good for what the verbs print: the layout is one rule
(narrow the widest column until the table fits, wrapping its cells onto more lines, never cutting them, so every
cell stays whole and distinguishable at any width). ``tabulate`` wraps only at column widths the caller computes
(its ``maxcolwidths``: the same rule would stay here); ``rich`` fits tables to the terminal by itself but brings
pygments and markdown-it as dependencies for this one function, and draws with box characters that a log or a
``| grep`` reads worse than plain columns.
"""
from __future__ import annotations

import os
import re
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


_PIECES = re.compile(r"[^\s\-,/_]*[\-,/_]?")     # the unbreakable pieces of a cell (what _wrap breaks between)


def _wrap(text: str, width: int) -> list:
    """``text`` (whitespace collapsed) on lines of at most ``width`` characters: broken at spaces, after hyphens and
    commas, slashes and underscores (kept at the line's end), and inside a word only where no such place exists:
    the lines, joined, are the text with the spaces at the breaks left out."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return [text]
    lines, rest = [], text
    while len(rest) > width:
        cut = max(rest.rfind(" ", 0, width + 1), max(rest.rfind(c, 0, width) for c in "-,/_") + 1)
        if cut <= 0:
            cut = width
        head, rest = rest[:cut].rstrip(" "), rest[cut:].lstrip(" ")
        lines.append(head)
    return lines + ([rest] if rest else [])


def _fit_wrapped(w: list, rows: list, room: int) -> None:
    """Narrow the column widths ``w`` (in place) until they sum to at most ``room``, one character at a time, each
    time from the column whose narrowing adds the fewest lines to the wrapped table (ties: the widest), keeping
    every column at least as wide as its longest word while any column can still give, and at least 3 wide."""
    ncol = len(w)
    word = [max([len(x) for r in rows for x in _PIECES.findall(r[j])] or [1]) for j in range(ncol)]
    memo: dict = {}

    def heights(j: int, width: int) -> list:
        if (j, width) not in memo:
            memo[j, width] = [len(_wrap(r[j], width)) for r in rows]
        return memo[j, width]

    for floor in (lambda j: max(3, word[j]), lambda j: 3):
        while sum(w) > room:
            free = [j for j in range(ncol) if w[j] > floor(j)]
            if not free:
                break
            cur = [heights(j, w[j]) for j in range(ncol)]

            def lines(j: int) -> int:
                alt = heights(j, w[j] - 1)
                return sum(max([alt[i]] + [cur[k][i] for k in range(ncol) if k != j]) for i in range(len(rows)))
            j = min(free, key=lambda k: (lines(k), -w[k]))
            w[j] -= 1


def table(headers: list, rows: list, *, width: int | None = None, shrink=(), sep: str = "  ",
          overflow: str = "wrap") -> str:
    """Rows aligned under ``headers``, every line at most ``width`` columns (the terminal's by default).

    ``shrink`` names the free-text columns that give up width first: a tuple of column indices, or a dict
    ``{index: least width}`` (default 8; used by ``"cut"``). ``overflow="wrap"`` (default): the widest column
    loses one character at a time until the table fits -- the ``shrink`` columns first, then any column, each kept
    at least as wide as its longest word, then down to 3 characters -- and a cell wider than its column continues
    on the next lines of its row (broken at spaces, hyphens, commas, slashes and underscores where it can), so no
    cell is ever shortened. ``"cut"``: one line per row; the ``shrink`` column with the most characters above its
    least width narrows, a shortened cell ending in "..." (for callers that pair rows with lines)."""
    if overflow not in ("wrap", "cut"):
        raise ValueError(f"overflow must be 'wrap' or 'cut', got {overflow!r}")
    width = terminal_width() if width is None else width
    cells = [[shown(c) for c in r] for r in rows]
    ncol = len(headers)
    w = [max([len(str(headers[j]))] + [len(" ".join(r[j].split())) for r in cells]) for j in range(ncol)]
    floors = dict(shrink) if isinstance(shrink, dict) else {j: 0 for j in shrink}
    floors = {j: (f or 8) for j, f in floors.items() if 0 <= j < ncol}
    total = sum(w) + len(sep) * (ncol - 1)
    if overflow == "wrap":
        _fit_wrapped(w, [list(map(str, headers))] + cells, width - len(sep) * (ncol - 1))
    else:
        while total > width:
            free = [j for j in floors if w[j] > floors[j]]
            if not free:
                break
            j = max(free, key=lambda k: w[k] - floors[k])
            w[j] -= 1
            total -= 1

    def render(row) -> list:
        if overflow == "cut":
            return [sep.join(shorten(str(c), w[j]).ljust(w[j]) for j, c in enumerate(row)).rstrip()]
        parts = [_wrap(str(c), w[j]) for j, c in enumerate(row)]
        n = max(len(p) for p in parts)
        return [sep.join((p[i] if i < len(p) else "").ljust(w[j]) for j, p in enumerate(parts)).rstrip()
                for i in range(n)]
    lines = render(headers) + [sep.join("-" * w[j] for j in range(ncol))]
    for r in cells:
        lines += render(r)
    return "\n".join(lines)
