"""Helpers shared by several statement groups of paper 004 (split from the former paper_004.py).

See the package docstring (lrnnkit/theorems/paper_004/__init__.py) for the paper and conventions."""
from __future__ import annotations

import numpy as np
from ...optional import require

PAPER = "004"


def w_of_input(T: list, x: list) -> list:
    """W(x)_{ij} = sum_k T_{ijk} x_k (eq. 3)."""
    return [[sum((T[i][j][k] * x[k] for k in range(len(x))), 0) for j in range(len(T[0]))] for i in range(len(T))]


# =========================================================================== abelian only
def group_table(fsa) -> np.ndarray:
    """Multiplication table of a group word problem automaton: table[g, h] = delta[g, h] (= g h)."""
    return np.asarray(fsa.delta)


def noncommuting_pair(fsa) -> tuple | None:
    t = group_table(fsa)
    n = t.shape[0]
    for a in range(n):
        for b in range(a + 1, n):
            if t[t[fsa.start, a], b] != t[t[fsa.start, b], a]:
                return a, b
    return None


# =========================================================================== linear read-out feasibility (LP)
def readout_feasible(states: np.ndarray, labels: np.ndarray, m: int) -> bool:
    """Is there a linear-argmax read-out (W, c) with argmax_j (W h + c)_j = label strictly for every given state?
    LP feasibility of (W_y - W_j) . h + (c_y - c_j) >= 1 for all j != y, each row scaled by 1/||(h, 1)|| (scaling a
    row by a positive factor preserves strict separability and keeps the LP well conditioned). Tolerance: HiGHS's
    default primal feasibility tolerance 1e-7 on the normalized rows."""
    linprog = require("scipy.optimize", "stats", "the linear read-out feasibility check (004, Proposition 2.4 and the hierarchy)").linprog
    n, H = states.shape
    rows = []
    for h, y in zip(states, labels):
        v = np.append(h, 1.0)
        v = v / np.linalg.norm(v)
        for j in range(m):
            if j == y:
                continue
            r = np.zeros(m * (H + 1))
            r[y * (H + 1):(y + 1) * (H + 1)] = -v
            r[j * (H + 1):(j + 1) * (H + 1)] = v
            rows.append(r)
    if not rows:
        return True
    res = linprog(np.zeros(m * (H + 1)), A_ub=np.array(rows), b_ub=-np.ones(len(rows)),
                  bounds=[(None, None)] * (m * (H + 1)), method="highs")
    return res.status == 0


def diagonal_power_states(a: np.ndarray, h0: np.ndarray, K: int) -> np.ndarray:
    """States after 1^k, k = 1..K, of the real-diagonal model with letter-1 diagonal a."""
    return np.array([h0 * a ** k for k in range(1, K + 1)])
