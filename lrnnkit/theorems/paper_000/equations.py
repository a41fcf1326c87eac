"""Paper 000: 000:equation-3, 000:equation-4.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from .._exact import _st, basis_vector, gh
from .._exact import mv, search, st_fraction, st_unit
from ..registry import CheckResult, statement
from ._common import PAPER


@statement(
    id="000:equation-3", paper=PAPER, perturb={"b0": F(1, 2)}, kind="claim",
    statement="(Eq. 3) h_t = a(x_t) h_{t-1} + b(x_t), h_0 = 0, b(1) = a(0) = 1, a(1) = -1, y_t = h_t implements the "
              "two-state parity automaton (scalar state, finite precision).",
    hypotheses="b(0) is not printed; the recursion needs b(0) = 0 (reconstructed).",
    conclusion="y_t = parity of x_1..x_t for every word.",
    verdict="holds",
    evidence="Exact reachable-state search over {0, 1}: states {0, 1}, output equals parity on every transition; with "
             "any b(0) != 0 the search finds a counterexample (the reconstruction b(0) = 0 is forced).",
    notes="000, Section 4.1.")
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


@statement(
    id="000:equation-4", paper=PAPER, perturb={"phi_hi": 2}, kind="claim",
    statement="(Eq. 4, Table 2) A_diag^-(x) = Diag(2 s(x) - 1) has eigenvalues 2 s(x)_i - 1 in [-1, 1] and "
              "A_GH^-(x) = I - 2 phi(x) v v^T has all eigenvalues 1 except one equal to 1 - 2 phi(x) in [-1, 1] "
              "(s in [0,1]^n, phi in [0,1], ||v|| = 1); Table 2: Mamba s = exp(-Delta_t exp(w_{1,i})), DeltaNet "
              "I - 2 beta_t k_t k_t^T.",
    hypotheses="s(x) in [0, 1]^n, phi(x) in [0, 1], ||v|| = 1.",
    conclusion="Eigenvalue range [-1, 1] for both modified transition families.",
    verdict="holds",
    evidence="Exact: for rational phi in [0, 1] and rational unit v (n = 2, 3), (I - 2 phi v v^T) v = (1 - 2 phi) v and "
             "w = w for w orthogonal to v (a basis of the complement), so the spectrum is {1, 1 - 2 phi}; 2 s - 1 "
             "maps [0, 1] onto [-1, 1]. Table 2's parametrizations reach the endpoints only in the limit "
             "(exp(-Delta e^w) in (0, 1) for Delta = softplus(.) > 0, beta = sigmoid(.) in (0, 1)); in float32 they "
             "are attained (exp underflows to 0, sigmoid rounds to 1), as App. A.3 remarks.",
    notes="000, Section 4.2 and Table 2.")
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
