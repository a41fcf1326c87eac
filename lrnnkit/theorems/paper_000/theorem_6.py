"""Paper 000: 000:theorem-6, and 000:theorem-2.printed-index (Theorem 2 with the index as printed, refuted by
Theorem 6's own network).

See the package docstring (lrnnkit/theorems/paper_000/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

from ...exact import sign
from .._exact import dot, mm, mv
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


def theorem_6_layer2(m: int) -> dict:
    """The second layer of Theorem 6's network (000, App. D) for addition modulo ``m``: ``{(x, h1): A}`` with
    ``A = H(theta(x, h1))``, theta(i, 1) = (1 - 2i) pi/m, theta(i, 0) = (2i + 1) pi/m, over every input the layer can
    see (x in 0..m-1, h1 in {0, 1}); angles are multiples of 2 pi / (2m)."""
    N2 = 2 * m
    return {(x, h): refl((1 - 2 * x) % N2 if h else (2 * x + 1) % N2, N2) for x in range(m) for h in (0, 1)}


def _det2(M):
    return M[0][0] * M[1][1] - M[0][1] * M[1][0]


#: bf16 keeps every real of modulus <= 1 within 2^-8 (round to nearest: half an ulp of 2^-7 at most below 1)
BF16_ABS_ERR = F(1, 2 ** 8)


@entry("000:theorem-2.printed-index", perturb={"index": "2^(i-1)"})
def check_theorem_2_printed_index(profile: str = "quick", index: str = "2^i-1", m: int = 3) -> CheckResult:
    """000, Theorem 2 with the index as printed: counting modulo m (m not a power of two) needs, for some layer i,
    inputs x_1..x_{2^i - 1} whose product A(x_1)..A(x_{2^i - 1}) has a non-real eigenvalue of modulus >= 1.

    Counterexample, Theorem 6's network (000, App. D) with m = 3 on the one-letter words 1^k: layer 1 has A = -1
    (real); every product of 2^2 - 1 = 3 layer-2 matrices is a product of three reflections, det = -1, so its
    eigenvalues are real (x^2 - t x - 1 has discriminant t^2 + 4 > 0); yet the network counts modulo 3. Finite
    precision (App. A.3 / B.1): layer 1's states 0, 1 are exact; layer 2 has B = 0, so its state is cast(exact
    product times h0), a function of the exact state; the exact states reached on 1^k are six vectors whose
    pairwise differences exceed 1/2 in some coordinate, above twice bf16's rounding error 2^-8 on [-1, 1], so the
    cast states are distinct and the decoder (any function of the state, as in the model) reads k mod 3 off them.
    ``index`` "2^(i-1)" (App. B.2's reading, 000:theorem-2) asks for products of 2 layer-2 matrices instead:
    rotations by 2 pi/3, with non-real eigenvalues of modulus 1, so the network meets the condition."""
    if m % 2 == 0 or m < 3:
        raise ValueError("m must be odd and >= 3 (not a power of two)")
    n_prod = {"2^i-1": 3, "2^(i-1)": 2}[index]          # the number of layer-2 factors, i = 2
    layer2 = theorem_6_layer2(m)
    mats = list(layer2.values())
    # layer 1: A = -1 for every input (one factor for i = 1 under both readings): real
    nonreal = []
    for combo in itertools.product(range(len(mats)), repeat=n_prod):
        P = mats[combo[0]]
        for c in combo[1:]:
            P = mm(P, mats[c])
        t, d = P[0][0] + P[1][1], _det2(P)
        # eigenvalues non-real iff t^2 - 4 d < 0; modulus^2 = d then (a real 2x2 matrix)
        if sign(t * t - 4 * d) < 0 and sign(d - 1) >= 0:
            nonreal.append([list(layer2)[c] for c in combo])
            break
    if nonreal:
        return CheckResult("open", f"the network meets the condition at index {index}: a product of {n_prod} layer-2 "
                                   f"matrices (inputs {nonreal[0]}) has a non-real eigenvalue of modulus >= 1, so it "
                                   "is no counterexample; whether this reading holds remains undecided here "
                                   "(App. B.2's reading is 000:theorem-2)")
    # the network on 1^k: (h1, h2) exact, label [k mod m == 0]; run until the state repeats
    h1, h2, k, seen, labels = F(0), (F(1), F(0)), 0, {}, {}
    while (h1, h2) not in seen:
        seen[(h1, h2)] = k
        labels.setdefault(h2, set()).add(k % m == 0)
        h1 = -h1 + 1
        h2 = mv(layer2[(1 % m, int(h1))], h2)
        k += 1
    period, first = k - seen[(h1, h2)], seen[(h1, h2)]
    counts = period % m == 0 and all(len(v) == 1 for v in labels.values())
    vecs = list(labels)
    apart = all(any(sign(abs_diff - F(1, 2)) >= 0 for abs_diff in (_abs(u[0] - v[0]), _abs(u[1] - v[1])))
                for a, u in enumerate(vecs) for v in vecs[a + 1:])
    bounded = all(sign(F(1) - _abs(x)) >= 0 for v in vecs for x in v)
    if not (counts and apart and bounded and 2 * BF16_ABS_ERR < F(1, 2)):
        return CheckResult("open", f"the recorded counterexample does not verify (counts {counts}, apart {apart}); "
                                   "whether the printed reading holds remains undecided")
    return CheckResult("falsified", f"Theorem 6's network (m = {m}) counts modulo {m} on 1^k for every k (exact: "
                       f"the state repeats after {first + period} steps with period {period}, each of the "
                       f"{len(vecs)} layer-2 states carrying one label), in exact arithmetic and after a bf16 cast "
                       f"(states pairwise >= 1/2 apart in a coordinate, rounding error <= 2^-8); layer 1's matrix "
                       f"is -1 and every product of {n_prod} layer-2 matrices (all {len(mats)} inputs (x, h1)) has "
                       "det -1, hence real eigenvalues: no layer meets the printed condition",
                       counterexample={"network": f"000 Theorem 6, m = {m}", "language": f"(1^{m})*",
                                       "layer 1": "A = -1, B = 1 (h_t = -h_{t-1} + 1)",
                                       "layer 2": "A = H(theta(x, h1)) (reflections), B = 0, h0 = (1, 0)",
                                       "products of 2^i - 1 matrices": "i = 1: -1; i = 2: three reflections, det -1, "
                                                                       "real eigenvalues",
                                       "period": period})


def _abs(x):
    return x if sign(x) >= 0 else -x
