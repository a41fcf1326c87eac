"""Paper 003: proof steps that are wrong while the statement they serve holds (issue 15, item 5).

The entry's statement is the proof step as printed: ``holds-as-corrected`` (falsified by the recorded instance,
the corrected step passes); see lrnnkit/theorems/paper_000/proof_errata.py.

003:theorem-2.2-proof-eigenvalues.

See the package docstring (lrnnkit/theorems/paper_003/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from .._exact import exact_identity as eye, exact_matmul as mm, is_psd, mstr, msub as sub, norm2_lt1, solve
from .._exact import transpose as tr
from ..registry import CheckResult, statement
from ._common import PAPER
from .theorem_2 import _descent_ok, lipschitz_operator

#: Lambda = diag(1/2, 1/2), I - Q = [[0, -1/2], [1/2, 0]] (a rotation by 90 degrees scaled by 1/2: ||I - Q|| = 1/2)
T22_LAMS = [F(1, 2), F(1, 2)]
T22_P = [[F(0), F(-1, 2)], [F(1, 2), F(0)]]


_T22_STEP = ("||J|| < 1 gives omega^T (I - J) omega >= (1 - ||J||) ||omega||^2 > 0, so the symmetric part of I - J, "
             "hence of (I - J)^{-1}, is positive definite; and '> 0 for all delta' reads '>= 0'")
_T22_CE = {"Lambda": "diag(1/2, 1/2)", "I - Q": [["0", "-1/2"], ["1/2", "0"]], "T": 1, "discriminant of I - J": "-1/4",
           "M": [["1", "10"], ["0", "1"]], "omega": ["1", "1"], "omega^T M^-1 omega": "-8"}


def _sym(M: list) -> list:
    return [[(M[i][j] + M[j][i]) / 2 for j in range(len(M))] for i in range(len(M))]


@statement(
    id="003:theorem-2.2-proof-eigenvalues", paper=PAPER, kind="construction",
    statement="(Proof of Theorem 2.2, App. F.2) 'we need to show that delta^T J (I - J)^{-1} J^T delta > 0 for all "
              "delta ... Note that from our assumption for the Lipschitz constant of the function, we have "
              "||J||_2 < 1, which means (I - J) has strictly positive eigenvalues. This completes our proof.'",
    hypotheses="J = J_x = J_h the Jacobian of h -> f_theta(x, h) (Theorem 2.1's layer over T steps), ||J||_2 < 1.",
    conclusion="(I - J) has strictly positive eigenvalues, hence the symmetric part of (I - J)^{-1} is PSD.",
    verdict="holds-as-corrected",
    counterexample=_T22_CE,
    corrected=_T22_STEP,
    evidence="Proof erratum, theorem unaffected: J is the Jacobian over the whole sequence (block lower triangular "
             "in time, diagonal blocks (I - Lambda)(I - Q)) and is not symmetric, so (1) ||J|| < 1 does not give "
             "real eigenvalues of I - J: Lambda = diag(1/2, 1/2), I - Q = [[0, -1/2], [1/2, 0]] (||I - Q|| = 1/2), "
             "T = 1 give J = [[0, -1/4], [1/4, 0]] with ||J|| < 1 and I - J with eigenvalues 1 +- i/4 (trace 2, "
             "det 17/16: discriminant -1/4 < 0); (2) positive eigenvalues would not suffice either: M = [[1, 10], "
             "[0, 1]] has eigenvalues 1, 1 but omega^T M^{-1} omega = -8 for omega = (1, 1). Also '> 0 for all "
             "delta' should read '>= 0' (delta in ker J^T gives 0). The right step: ||J|| < 1 gives omega^T (I - J) "
             "omega >= (1 - ||J||) ||omega||^2 > 0, so the symmetric part of I - J, hence of (I - J)^{-1}, is "
             "positive definite. Checked exactly on the instance for T = 1, 2, 3 (||J|| < 1; symmetric part of "
             "(I - J)^{-1} J J^T PSD; <g, g*> >= 0 on basis and sign vectors), so the statement holds there.",
    notes="003, App. F.2, last paragraph. Independent of 003:theorem-2.2's own check (a counterexample search over "
          "the conclusion).")
def check_theorem_2_2_eigenvalues(profile: str = "quick") -> CheckResult:
    import itertools
    rows = {}
    for T in (1, 2, 3) if profile == "quick" else (1, 2, 3, 4):
        J = lipschitz_operator(T22_LAMS, T22_P, T)
        n = len(J)
        if not norm2_lt1(J):
            return CheckResult("open", f"T = {T}: the instance has ||J|| >= 1 (outside the hypothesis)")
        IJ = sub(eye(n), J)
        inv = solve(IJ, eye(n))
        if not is_psd(_sym(inv)) or not is_psd(_sym(mm(mm(inv, J), tr(J)))):
            return CheckResult("falsified", f"T = {T}: symmetric part not PSD (the statement fails)",
                               counterexample={"T": T, "J": mstr(J)})
        for delta in itertools.product((F(-1), F(0), F(1)), repeat=n) if n <= 4 else \
                [tuple(F(int(i == k)) for i in range(n)) for k in range(n)]:
            ok, info = _descent_ok(J, list(delta))
            if not ok:
                return CheckResult("falsified", f"T = {T}: not a descent direction", counterexample=info)
        rows[T] = mstr(J) if T == 1 else f"{n} x {n}"
    J1 = lipschitz_operator(T22_LAMS, T22_P, 1)
    IJ = sub(eye(2), J1)
    tr_, det_ = IJ[0][0] + IJ[1][1], IJ[0][0] * IJ[1][1] - IJ[0][1] * IJ[1][0]
    disc = tr_ ** 2 - 4 * det_
    M = [[F(1), F(10)], [F(0), F(1)]]
    Minv = solve(M, eye(2))
    q = sum(Minv[i][j] for i in range(2) for j in range(2))          # omega = (1, 1)
    if not disc < 0 or not q < 0:
        return CheckResult("open", "the printed step holds on the recorded instances (erratum not confirmed)",
                           details={"discriminant": str(disc), "omega^T M^-1 omega": str(q)})
    return CheckResult("holds-as-corrected", f"I - J has non-real eigenvalues (discriminant {disc}) with ||J|| < 1; "
                       f"positive eigenvalues do not give PSD (omega^T M^-1 omega = {q}); the statement holds on the "
                       f"instance: {rows}", counterexample=dict(_T22_CE, **{"discriminant of I - J": str(disc),
                                                                            "omega^T M^-1 omega": str(q)}),
                       corrected=_T22_STEP, details={"discriminant": str(disc), "q": str(q)})
