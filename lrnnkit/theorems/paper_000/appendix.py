"""Paper 000: 000:appendix-A.2, 000:appendix-D-identities.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from .._exact import _mat_json, basis_vector, eye, is_psd, madd, mm
from .._exact import mv, tr
from ..registry import CheckResult, entry
from ._common import refl, rot


@entry("000:appendix-A.2", perturb={"row_form": True})
def check_appendix_a2(profile: str = "quick", row_form: bool = False) -> CheckResult:
    for N in (1, 2, 3):
        maps = list(itertools.product(range(N), repeat=N))
        sets = [[m] for m in maps] + ([list(c) for c in itertools.combinations(maps, 2)] if N == 2 else [])
        for letters in sets:
            mats = [tuple(tuple(F(int((p[r] == q) if row_form else (p[q] == r))) for q in range(N)) for r in range(N))
                    for p in letters]
            H0 = basis_vector(0, N)
            seen, todo = {0}, [0]
            while todo:
                q = todo.pop()
                e = basis_vector(q, N)
                for A, p in zip(mats, letters):
                    if mv(A, e) != basis_vector(p[q], N):
                        return CheckResult("falsified", "one-hot tracking fails", counterexample=letters)
                    if p[q] not in seen:
                        seen.add(p[q])
                        todo.append(p[q])
            del H0
    A = ((F(1), F(1)), (F(0), F(0)))
    big = not is_psd(madd(eye(2), mm(tr(A), A), -1))
    if not big:
        return CheckResult("falsified", "constant map has norm <= 1", counterexample=_mat_json(A))
    return CheckResult("holds", "one-hot construction exact on every automaton tried; ||[[1,1],[0,0]]|| > 1")


@entry("000:appendix-D-identities", perturb={"hh_sign": -1})
def check_appendix_d(profile: str = "quick", hh_sign: int = 1) -> CheckResult:
    N = 12 if profile == "quick" else 24
    for a, g in itertools.product(range(N), repeat=2):
        if mm(rot(a, N), rot(g, N)) != rot(a + g, N) or mm(refl(a, N), refl(g, N)) != rot(hh_sign * (a - g), N) \
                or mm(rot(a, N), refl(g, N)) != refl(a + g, N) or mm(refl(g, N), rot(a, N)) != refl(g - a, N):
            return CheckResult("falsified", "identity fails", counterexample={"alpha": f"2pi*{a}/{N}",
                                                                              "gamma": f"2pi*{g}/{N}"})
    return CheckResult("holds", f"all four identities exact on the {N} x {N} angle grid")
