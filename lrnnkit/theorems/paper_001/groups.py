"""Paper 001: 001:claim-sn-one-layer, 001:claim-s4-a5-rotations.

See the package docstring (lrnnkit/theorems/paper_001/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

from .._exact import _mat_json, det, dot, eye, gh, mm, mscale, mv, prod
from ..paper_000 import perm_matrix, swap_vector, transpositions
from ..registry import CheckResult, entry
from ...exact import zeta


@entry("001:claim-sn-one-layer", perturb={"slack": -1})
def check_sn(profile: str = "quick", slack: int = 0) -> CheckResult:
    nmax = 4 if profile == "quick" else 5
    for n in range(2, nmax + 1):
        elems = list(itertools.permutations(range(n)))
        mats = {}
        for p in elems:
            sw = transpositions(p)
            if len(sw) > n - 1 + slack:
                return CheckResult("falsified", "more than n - 1 swaps", counterexample=list(p))
            mats[p] = prod([gh(2, swap_vector(i, j, n)) for i, j in sw], n) if sw else eye(n)
            if mats[p] != perm_matrix(p):
                return CheckResult("falsified", "reflection product != permutation", counterexample=list(p))
        H0 = tuple(F(i + 1) for i in range(n))
        g = {H0: tuple(range(n))}
        queue, head = [H0], 0
        while head < len(queue):
            H = queue[head]
            head += 1
            y = g[H]
            for p in elems:
                H2 = mv(mats[p], H)
                y2 = tuple(p[y[q]] for q in range(n))      # first y, then p
                if H2 in g:
                    if g[H2] != y2:
                        return CheckResult("falsified", "state does not determine the prefix product",
                                           counterexample={"n": n})
                else:
                    g[H2] = y2
                    queue.append(H2)
        if len(g) != math.factorial(n):
            return CheckResult("falsified", "orbit size differs from n!", counterexample={"n": n})
    return CheckResult("holds", f"S_2..S_{nmax}: one layer with n_h = n - 1 reflections implements the word problem "
                                f"(exact)")


def _cube_group() -> list:
    """The 24 rotations of the cube: signed permutation matrices with determinant +1 (rational)."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            M = tuple(tuple(F(signs[i]) if perm[i] == j else F(0) for j in range(3)) for i in range(3))
            if det(M) == 1:
                out.append(M)
    return out


def _icosahedral_group() -> list:
    """The 60 rotations of the icosahedron, generated exactly in Q(sqrt 5) subset Q(zeta_5) by the cyclic coordinate
    permutation (order 3) and (1/2)[[1, -phi, 1/phi], [phi, 1/phi, -1], [1/phi, 1, phi]] (order 5), phi the golden
    ratio = 1 + zeta_5 + zeta_5^4."""
    phi = 1 + zeta(5, 1) + zeta(5, 4)
    iphi = phi - 1
    h = F(1, 2)
    g1 = ((F(0), F(0), F(1)), (F(1), F(0), F(0)), (F(0), F(1), F(0)))
    g2 = ((h, -h * phi, h * iphi), (h * phi, h * iphi, F(-1, 2)), (h * iphi, h, h * phi))
    elems, todo = {eye(3)}, [eye(3)]
    while todo:
        x = todo.pop()
        for g in (g1, g2):
            y = mm(x, g)
            if y not in elems:
                elems.add(y)
                todo.append(y)
                if len(elems) > 200:
                    raise RuntimeError("group too large")
    return list(elems)


def _order(M) -> int:
    P, k = M, 1
    while P != eye(3):
        P, k = mm(P, M), k + 1
    return k


def two_reflections(R) -> tuple:
    """Unnormalized reflection vectors u, w with (w.w)(u.u) R = ((w.w) I - 2 w w^T)((u.u) I - 2 u u^T) for a
    rotation R != I of R^3 (first reflect across u-perp, then across w-perp): u = (R - I) x is orthogonal to the
    axis; w = u + R u (the bisector), or, for a half-turn (R u = -u), w = a x u with a = (R + I) y on the axis. No
    division is needed, so the identity is checked exactly in the field of R's entries."""
    I3 = eye(3)
    for x in ((F(1), F(0), F(0)), (F(0), F(1), F(0)), (F(0), F(0), F(1))):
        u = tuple(a - b for a, b in zip(mv(R, x), x))
        if any(c != 0 for c in u):
            break
    Ru = mv(R, u)
    w = tuple(a + b for a, b in zip(u, Ru))
    if all(c == 0 for c in w):
        for y in ((F(1), F(0), F(0)), (F(0), F(1), F(0)), (F(0), F(0), F(1))):
            a = tuple(p + q for p, q in zip(mv(R, y), y))
            if any(c != 0 for c in a):
                break
        w = (a[1] * u[2] - a[2] * u[1], a[2] * u[0] - a[0] * u[2], a[0] * u[1] - a[1] * u[0])
    del I3
    return u, w


def _refl_scaled(w) -> tuple:
    ww = dot(w, w)
    return tuple(tuple((ww if i == j else F(0)) - 2 * w[i] * w[j] for j in range(3)) for i in range(3))


@entry("001:claim-s4-a5-rotations", perturb={"h0": (F(0), F(0), F(1))})
def check_s4_a5(profile: str = "quick", h0: tuple = (F(1), F(2), F(5))) -> CheckResult:
    for name, G, profile_want in (("S4", _cube_group(), {1: 1, 2: 9, 3: 8, 4: 6}),
                                  ("A5", _icosahedral_group(), {1: 1, 2: 15, 3: 20, 5: 24})):
        orders = {}
        for M in G:
            o = _order(M)
            orders[o] = orders.get(o, 0) + 1
        if orders != profile_want:
            return CheckResult("falsified", f"{name}: order profile {orders}", counterexample={"group": name})
        for R in G:
            if R == eye(3):
                continue
            u, w = two_reflections(R)
            lhs = mscale(R, dot(w, w) * dot(u, u))
            if mm(_refl_scaled(w), _refl_scaled(u)) != lhs:
                return CheckResult("falsified", f"{name}: element not a product of two reflections",
                                   counterexample={"group": name, "R": _mat_json(R)})
        H0 = h0
        orbit = {mv(R, H0) for R in G}
        if len(orbit) != len(G):
            return CheckResult("falsified", f"{name}: orbit of H0 not free", counterexample={"group": name})
    return CheckResult("holds", "S4 (cube, 24) and A5 (icosahedron, 60): every rotation = two reflections, free orbit "
                                "of (1, 2, 5); exact")
