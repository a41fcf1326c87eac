"""Helpers shared by several statement groups of paper 001 (split from the former paper_001.py).

See the package docstring (lrnnkit/theorems/paper_001/__init__.py) for the paper and conventions."""
from __future__ import annotations



PAPER = "001"
