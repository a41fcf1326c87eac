"""Paper 000: 000:theorem-6.

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

from fractions import Fraction as F

from .._exact import dot
from .._exact import mv
from ..registry import CheckResult, entry
from ._common import refl, rot


@entry("000:theorem-6", perturb={"theta1_sign": 1})
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
