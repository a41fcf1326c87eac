"""Paper 000: 000:theorem-6.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from .._exact import dot
from .._exact import mv
from ..registry import CheckResult, statement
from ._common import PAPER, refl, rot


@statement(
    id="000:theorem-6", paper=PAPER, perturb={"theta1_sign": 1}, kind="theorem",
    statement="Theorem 6 (Modular addition with reflections). An LRNN with two layers in the form (1), where "
              "A: N -> {-1} for the first layer and A: R^2 -> M_1^2({-1}) for the second layer, can perform "
              "addition modulo m. In particular, the LRNN will have 2 scalar states in the first layer and 2m states, "
              "each being a vector in R^2, in the second layer. (Construction: h^(1)_t = -h^(1)_{t-1} + 1, "
              "y^(1)_t = (x_t, h_t); h^(2)_0 = (1,0), h^(2)_t = H(theta(y_1, y_2)) h^(2)_{t-1}, theta(i,1) = "
              "(1-2i) pi/m, theta(i,0) = (2i+1) pi/m, dec = argmax_i max(c_i^T h, d_i^T h), d_0 = (1,0), "
              "c_0 = H(theta(0,1)) d_0, d_i = R(2 i pi/m) d_0, c_i = R(-2 i pi/m) c_0.)",
    hypotheses="m >= 1; inputs x_i in {0..m-1}.",
    conclusion="The second layer outputs (x_1 + ... + x_t) mod m for every t.",
    verdict="holds",
    evidence="Exact (cyclotomic) breadth-first search over all reachable (layer-1 state, layer-2 state, sum mod m) "
             "for m = 1..8 (quick) / 1..16 (deep): every reachable layer-2 state is c_y (t odd) or d_y (t even) with "
             "y the running sum, the 2m vectors c_i, d_i are distinct unit vectors (so the argmax is strict and "
             "correct), and the search closes; both layers use the printed transition sets.",
    notes="000, Appendix D. The proof's closing line writes y_t = (sum_{i=1}^m x_i) mod m for sum_{i=1}^t.")
def check_theorem_6(profile: str = "quick", theta1_sign: int = -1) -> CheckResult:
    M = 8 if profile == "quick" else 16
    for m in range(1, M + 1):
        N2 = 2 * m                                         # angles are multiples of pi/m = 2 pi / (2m)
        d = [mv(rot(2 * i, N2), (F(1), F(0))) for i in range(m)]
        c0 = mv(refl(1, N2), d[0])                         # H(theta(0,1)) = H(pi/m)
        cs = [mv(rot(-2 * i, N2), c0) for i in range(m)]
        allv = d + cs
        if len(set(allv)) != 2 * m or any(dot(v, v) != 1 for v in allv):
            return CheckResult("falsified", "c_i, d_i not distinct unit vectors", counterexample={"m": m})
        theta = {(i, 1): (1 + theta1_sign * 2 * i) % N2 for i in range(m)}
        theta.update({(i, 0): (2 * i + 1) % N2 for i in range(m)})
        start = (F(0), d[0], 0)
        seen, todo = {start}, [start]
        while todo:
            h1, h2, y = todo.pop()
            for x in range(m):
                n1 = -h1 + 1
                n2 = mv(refl(theta[(x, int(n1))], N2), h2)
                ny = (y + x) % m
                want = cs[ny] if n1 == 1 else d[ny]
                if n2 != want:
                    return CheckResult("falsified", "layer-2 state off the predicted orbit",
                                       counterexample={"m": m, "x": x})
                nxt = (n1, n2, ny)
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return CheckResult("holds", f"m = 1..{M}: exact reachable-state search closed with correct outputs")
