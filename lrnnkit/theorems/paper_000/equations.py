"""Paper 000: 000:equation-3, 000:equation-4.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from .._exact import _st, basis_vector, gh
from .._exact import mv, search, st_fraction, st_unit
from ..registry import CheckResult, entry


@entry("000:equation-3", perturb={"b0": F(1, 2)})
def check_eq3(profile: str = "quick", b0=F(0)) -> CheckResult:
    def run(b0):
        seen, todo = {(F(0), 0)}, [(F(0), 0)]
        while todo:
            h, par = todo.pop()
            for x in (0, 1):
                h2 = (F(-1) if x else F(1)) * h + (F(1) if x else b0)
                p2 = par ^ x
                if h2 != p2:
                    return False
                if (h2, p2) not in seen:
                    if len(seen) > 50:
                        return False
                    seen.add((h2, p2))
                    todo.append((h2, p2))
        return True
    if not run(b0):
        return CheckResult("falsified", f"eq. 3 with b(0) = {b0} does not compute parity",
                           counterexample={"b(0)": str(b0)})
    if run(F(1, 2)):
        return CheckResult("open", "b(0) = 1/2 also works: the reconstruction is not forced")
    return CheckResult("holds", "eq. 3 with b(0) = 0 computes parity for all words (exact); b(0) = 1/2 fails")


@entry("000:equation-4", perturb={"phi_hi": 2})
def check_eq4(profile: str = "quick", phi_hi=1) -> CheckResult:
    import numpy as np
    N = 60 if profile == "quick" else 600
    for n in (2, 3):
        def bad(args, n=n):
            phi, v = args
            G = gh(2 * phi, v)
            if mv(G, v) != tuple((1 - 2 * phi) * x for x in v):
                return True
            # complement basis: e_j - (v_j) v for j with those vectors spanning v-perp
            for j in range(n):
                e = basis_vector(j, n)
                w = tuple(a - v[j] * b for a, b in zip(e, v))
                if mv(G, w) != w:
                    return True
            return not -1 <= 1 - 2 * phi <= 1
        found = search(_st().tuples(st_fraction(0, phi_hi), st_unit(n)), bad, N)
        if found is not None:
            return CheckResult("falsified", "spectrum not {1, 1 - 2 phi}", counterexample=repr(found))
    s = np.exp(-np.float32(200.0) * np.exp(np.float32(0.0)))
    sig = np.float32(1) / (np.float32(1) + np.exp(-np.float32(40.0)))
    if not (2 * s - 1 == -1 and 1 - 2 * sig == -1):
        return CheckResult("open", "float32 endpoints not attained")
    return CheckResult("holds", "spectra verified exactly; float32 attains the endpoints -1")
