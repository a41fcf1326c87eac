"""Paper 003, App. D.3.2: 003:claim-D.3.2.circulant.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np

from .._exact import exact_matmul as mm
from ..registry import CheckResult, entry


def circulant(c: list) -> list:
    """C[i][j] = c[(i - j) mod n] (first column c)."""
    n = len(c)
    return [[c[(i - j) % n] for j in range(n)] for i in range(n)]


@entry("003:claim-D.3.2.circulant", perturb={"corner": 1})
def check_circulant(profile: str = "quick", corner=0) -> CheckResult:
    """``corner`` (the perturbation 1) is added to the top-right entry: the matrices are no longer circulant."""
    rng = np.random.default_rng(8)
    N = 40 if profile == "quick" else 400
    for _ in range(N):
        n = int(rng.integers(2, 6))
        mats = [circulant([F(int(rng.integers(-5, 6)), int(rng.integers(1, 4))) for _ in range(n)]) for _ in range(3)]
        mats = [[[x + (corner if (i, j) == (0, n - 1) and k == 0 else 0) for j, x in enumerate(r)]
                 for i, r in enumerate(M)] for k, M in enumerate(mats)]
        for X, Y in itertools.combinations(mats, 2):
            if mm(X, Y) != mm(Y, X):
                return CheckResult("falsified", "two circulants do not commute",
                                   counterexample={"X": [[str(v) for v in r] for r in X]})
        prods = set()
        for perm in itertools.permutations(range(3)):
            P = mats[perm[0]]
            for i in perm[1:]:
                P = mm(mats[i], P)
            prods.add(tuple(map(tuple, P)))
        if len(prods) != 1:
            return CheckResult("falsified", "the product depends on the order of the letters")
    T = [[F(1), F(2), F(0)], [F(0), F(1), F(2)], [F(0), F(0), F(1)]]      # Toeplitz, not circulant
    C = circulant([F(1), F(2), F(3)])
    toeplitz_commutes = mm(T, C) == mm(C, T)
    if toeplitz_commutes:
        return CheckResult("open", "the non-circulant control commutes: the commutation test has no power here")
    # float: DFT co-diagonalization and the diagonal twin
    worst_off, worst_run = 0.0, 0.0
    for _ in range(N):
        n = int(rng.integers(2, 9))
        Fm = np.fft.fft(np.eye(n))
        Finv = np.linalg.inv(Fm)
        cs = [rng.standard_normal(n) for _ in range(3)]
        cs = [c / np.abs(np.fft.fft(c)).max() for c in cs]            # spectral radius 1
        Bs = [rng.standard_normal(n) for _ in range(3)]
        for c in cs:
            D = Fm @ np.array(circulant(list(c)), dtype=float) @ Finv
            worst_off = max(worst_off, np.abs(D - np.diag(np.diag(D))).max() / np.abs(D).max())
        word = rng.integers(0, 3, size=20)
        h = np.zeros(n)
        hd = np.zeros(n, dtype=complex)
        for a in word:
            h = np.array(circulant(list(cs[a])), dtype=float) @ h + Bs[a]
            hd = np.fft.fft(cs[a]) * hd + Fm @ Bs[a]
        worst_run = max(worst_run, np.abs(Finv @ hd - h).max() / max(1.0, np.abs(h).max()))
    if worst_off > 1e-12 or worst_run > 1e-9:
        return CheckResult("falsified", f"DFT does not diagonalize (off {worst_off:.2e}) or the twin differs "
                                        f"({worst_run:.2e})", counterexample={"off": worst_off, "run": worst_run})
    return CheckResult("holds", f"circulants commute exactly ({N} cases; a Toeplitz control does not); DFT "
                                f"co-diagonalizes (off-diagonal {worst_off:.1e}) and the diagonal twin reproduces the "
                                f"RNN (deviation {worst_run:.1e})")
