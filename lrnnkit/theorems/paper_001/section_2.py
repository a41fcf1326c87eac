"""Paper 001, Section 2 (DeltaNet background) and the D_3 remark of Section 4: 001:equation-2-gradient-step,
001:beta-geometry, 001:d3-is-s3, 001:section-2.1.citation.

See the package docstring (lrnnkit/theorems/paper_001/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np

from .._exact import det, eye, gh, mm, mv, rank, tr
from ..registry import CheckResult, entry
from .theorem_1 import dihedral_mul
from .. import get


def _rand_q(rng, lo=-6, hi=6, den=4) -> F:
    return F(int(rng.integers(lo, hi + 1)), int(rng.integers(1, den + 1)))


def deltanet_loss(H, k, v) -> F:
    """L(H) = 1/2 ||H^T k - v||^2 (001, Section 2), exact."""
    r = [sum(H[i][j] * k[i] for i in range(len(k))) - v[j] for j in range(len(v))]
    return sum(x * x for x in r) / 2


def gradient_by_differences(H, k, v) -> tuple:
    """dL/dH by central differences: exact for a quadratic L with any step (here 1), independent of the closed
    form k (k^T H - v^T) the paper writes."""
    n, d = len(H), len(H[0])
    G = []
    for i in range(n):
        row = []
        for j in range(d):
            Hp = [list(r) for r in H]
            Hm = [list(r) for r in H]
            Hp[i][j] += 1
            Hm[i][j] -= 1
            row.append((deltanet_loss(Hp, k, v) - deltanet_loss(Hm, k, v)) / 2)
        G.append(tuple(row))
    return tuple(G)


@entry("001:equation-2-gradient-step", perturb={"write_sign": -1})
def check_gradient_step(profile: str = "quick", write_sign: int = 1) -> CheckResult:
    rng = np.random.default_rng(5)
    N = 200 if profile == "quick" else 2000
    for _ in range(N):
        n, d = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        # a rational unit key: stereographic image of a random rational point
        t = [_rand_q(rng) for _ in range(n - 1)]
        s = sum((x * x for x in t), F(0))
        k = tuple([(1 - s) / (1 + s)] + [2 * x / (1 + s) for x in t])
        H = tuple(tuple(_rand_q(rng) for _ in range(d)) for _ in range(n))
        v = tuple(_rand_q(rng) for _ in range(d))
        beta = _rand_q(rng, -4, 12, 4)
        G = gradient_by_differences(H, k, v)
        step = tuple(tuple(H[i][j] - beta * G[i][j] for j in range(d)) for i in range(n))
        A = tuple(tuple(F(int(i == j)) - beta * k[i] * k[j] for j in range(n)) for i in range(n))
        rec = tuple(tuple(x + write_sign * beta * k[i] * v[j] for j, x in enumerate(row))
                    for i, row in enumerate(mm(A, H)))
        res_old = mv(tr(H), k)
        res_new = mv(tr(rec), k)
        if sum(x * x for x in k) != 1 or step != rec or any(
                a - vj != (1 - beta) * (b - vj) for a, b, vj in zip(res_new, res_old, v)):
            return CheckResult("falsified", "the DeltaNet step is not the gradient step",
                               counterexample={"k": [str(x) for x in k], "beta": str(beta),
                                               "H": [[str(x) for x in r] for r in H], "v": [str(x) for x in v]})
    return CheckResult("holds", f"{N} exact cases: H - beta grad L = (I - beta k k^T) H + beta k v^T and the "
                                "residual scales by (1 - beta)")


@entry("001:beta-geometry", perturb={"reflection_beta": F(3, 2)})
def check_beta_geometry(profile: str = "quick", reflection_beta=2) -> CheckResult:
    rng = np.random.default_rng(6)
    N = 150 if profile == "quick" else 1500
    for _ in range(N):
        n = int(rng.integers(1, 5))
        w = tuple(_rand_q(rng) for _ in range(n))
        if not any(w):
            continue
        I, P, R = gh(0, w), gh(1, w), gh(reflection_beta, w)
        ww = sum(x * x for x in w)
        # a vector orthogonal to w (n >= 2): project a random vector
        u0 = tuple(_rand_q(rng) for _ in range(n))
        c = sum(a * b for a, b in zip(u0, w)) / ww
        u = tuple(a - c * b for a, b in zip(u0, w))
        zero = (F(0),) * n
        ok = (I == eye(n) and mm(P, P) == P and P == tr(P) and mv(P, w) == zero and rank(P) == n - 1
              and mm(R, R) == eye(n) and mm(tr(R), R) == eye(n) and mv(R, w) == tuple(-x for x in w)
              and mv(R, u) == u and det([list(r) for r in R]) == -1)
        if not ok:
            return CheckResult("falsified", "beta = 0/1/2 do not give identity / projection / reflection",
                               counterexample={"w": [str(x) for x in w]})
    return CheckResult("holds", f"{N} exact directions: identity, orthogonal projection onto k^perp, reflection")


S3_PERMS = list(itertools.permutations(range(3)))


#: Z_6 as the rotations of 6 points: a group of order 6 that is not isomorphic to D_3 (the perturbation)
Z6_PERMS = [tuple((x + k) % 6 for x in range(6)) for k in range(6)]


def d3_s3_isomorphisms(target: list = S3_PERMS) -> list:
    """All isomorphisms D_3 -> ``target`` (brute force over the 720 bijections), D_3 from 001 eq. (3) and the
    target (default S_3) as permutations composed left to right."""
    D = [("r", i) for i in range(3)] + [("s", i) for i in range(3)]

    def comp(p, q):
        return tuple(q[p[x]] for x in range(len(p)))
    out = []
    for img in itertools.permutations(target):
        f = dict(zip(D, img))
        if all(f[dihedral_mul(g, h, 3)] == comp(f[g], f[h]) for g in D for h in D):
            out.append({f"{a}{i}": list(p) for (a, i), p in f.items()})
    return out


@entry("001:d3-is-s3", perturb={"target": Z6_PERMS})
def check_d3_s3(profile: str = "quick", target: list = S3_PERMS) -> CheckResult:
    """``target``: the group D_3 is claimed isomorphic to (S_3); the perturbation Z_6 (abelian, not D_3)."""
    isos = d3_s3_isomorphisms(target)
    if len(isos) != 6:
        return CheckResult("falsified" if not isos else "open", f"{len(isos)} isomorphisms found (expected 6)",
                           counterexample={"isomorphisms": len(isos)} if not isos else None)
    return CheckResult("holds", "6 isomorphisms D_3 -> S_3 (= |Aut(S_3)|)", details={"example": isos[0]})


@entry("001:section-2.1.citation", perturb={"one_layer_theorem": "000:theorem-2"})
def check_citation_2_1(profile: str = "quick", one_layer_theorem: str = "000:theorem-3") -> CheckResult:
    s = get(one_layer_theorem)
    if s.verdict != "holds" or "one layer" not in s.statement or "M_{k-1}^n({-1, 1})" not in s.statement:
        return CheckResult("falsified", f"{one_layer_theorem} is not a one-layer reflection construction that holds",
                           counterexample={"cited": one_layer_theorem, "verdict": s.verdict})
    if "only if" not in get("000:theorem-2").statement or "two layers" not in get("000:theorem-6").statement:
        return CheckResult("holds", "the cited numbering matches 000 after all")
    swaps = [(0, 1), (0, 2), (1, 2)]
    H0 = (F(1), F(2), F(3))
    mats = {sw: gh(2, tuple(F(1) if r == sw[0] else F(-1) if r == sw[1] else F(0) for r in range(3))) for sw in swaps}
    for n in range(6):
        for word in itertools.product(swaps, repeat=n):
            h, perm = H0, [0, 1, 2]
            for sw in word:
                h = mv(mats[sw], h)
                perm = [sw[1] if p == sw[0] else sw[0] if p == sw[1] else p for p in perm]
            if h != tuple(H0[perm.index(r)] for r in range(3)):
                return CheckResult("falsified", "one reflection layer does not track the swaps",
                                   counterexample=[list(w) for w in word])
    return CheckResult("holds-with-wording-slip", "000 Theorem 3 (one layer, reflections) tracks every swap word "
                       "of length <= 5 in S_3 exactly; 000 Theorem 2 is an impossibility result",
                       counterexample={"cited": "000, Theorem 2 and 6", "000 Theorem 2": "impossibility (modular "
                                       "counting)", "one-layer swap result": "000, Theorem 3 (k = 2)"},
                       corrected="Theorem 3 (one layer); Theorems 4 and 6 (multiple layers)")
