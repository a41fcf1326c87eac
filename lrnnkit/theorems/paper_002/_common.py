"""Helpers shared by several statement groups of paper 002 (split from the former paper_002.py).

See the package docstring (lrnnkit/theorems/paper_002/__init__.py) for the paper and conventions."""
from __future__ import annotations



PAPER = "002"


CHARS = ("0", "-", "1")
