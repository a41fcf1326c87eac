"""Helpers shared by several statement groups of paper 003 (split from the former paper_003.py).

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from ...model.linalg import gh_matrix_exact


PAPER = "003"


# --------------------------------------------------------------------------- exact linear algebra (Fractions)
# shared with the other papers: _exact.py (lists of Fractions; exact_identity / exact_matmul from lrnnkit.model.linalg)
def gh(alpha, u: list) -> list:
    """``I - 2 alpha u u^T / (u^T u)`` exactly (eq. 10's factor with a non-normalized rational direction)."""
    return gh_matrix_exact(2 * F(alpha), u)


def _rat_strategy(num_lo: int, num_hi: int, den: int):
    from hypothesis import strategies as st
    return st.integers(num_lo, num_hi).map(lambda k: F(k, den))


def _mat_strategy(d: int, num_lo: int, num_hi: int, den: int):
    from hypothesis import strategies as st
    return st.lists(st.lists(_rat_strategy(num_lo, num_hi, den), min_size=d, max_size=d), min_size=d, max_size=d)
