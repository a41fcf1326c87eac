"""Paper 004: 004:proposition-2.3, 004:section-2.3.orthogonal-rotation-form, 004:section-2.3.commutation, 004:section-2.3.abelian-only.

See the package docstring (lrnnkit/theorems/paper_004/__init__.py) for the paper and conventions."""
from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np

from .._exact import block_diag, det, exact_identity as eye, exact_matmul as mm, find_or_none, mstr, solve
from .._exact import transpose as tr
from ..registry import CheckResult, entry
from ._common import noncommuting_pair
from ...automata.fsa import FSA
from ...automata.groups import group_word_problem
from ...certify import certify
from ...exact import cos2pi, sin2pi
from ...model import Decoder, Layer, Model, TableMap, Transition
from ..paper_003.theorem_d import cayley_orthogonal, random_skew


# =========================================================================== Proposition 2.3 (rotations)
def abelian_fsa(invariants: list):
    """Word problem of Z_{m_1} x ... x Z_{m_k}: states/letters = tuples (lexicographic), start = 0."""
    elems = list(itertools.product(*[range(m) for m in invariants]))
    index = {g: i for i, g in enumerate(elems)}
    names = ["x".join(map(str, g)) for g in elems]
    delta = [[index[tuple((a + b) % m for a, b, m in zip(g, h, invariants))] for h in elems] for g in elems]
    return FSA(names, delta, 0, labels=names, name="Z" + "xZ".join(map(str, invariants))), elems


def rotation_model(invariants: list):
    """Proposition 2.3's construction (App. A.2): one 2x2 rotation block per cyclic factor, angle 2 pi g_i / m_i
    for input g, h_0 = e_1 in every block, linear read-out with row (cos 2 pi r_i/m_i, sin 2 pi r_i/m_i)_i for
    class r (scores sum_i cos(2 pi (g_i - r_i)/m_i), uniquely maximal at r = g). Exact cyclotomic weights."""
    fsa, elems = abelian_fsa(invariants)
    k = len(invariants)
    d = 2 * k
    trans = []
    for g in elems:
        A = [[F(0)] * d for _ in range(d)]
        for i, (gi, m) in enumerate(zip(g, invariants)):
            c, s = cos2pi(gi, m), sin2pi(gi, m)
            A[2 * i][2 * i], A[2 * i][2 * i + 1], A[2 * i + 1][2 * i], A[2 * i + 1][2 * i + 1] = c, -s, s, c
        t = Transition.from_exact(A)
        t.blocks = [np.array([[float(A[2 * i + a][2 * i + b]) for b in range(2)] for a in range(2)]) for i in range(k)]
        trans.append(t)
    H0 = [F(int(j % 2 == 0)) for j in range(d)]
    W = [[v for i, (ri, m) in enumerate(zip(r, invariants)) for v in (cos2pi(ri, m), sin2pi(ri, m))] for r in elems]
    dec = Decoder.exact(W, [F(0)] * len(elems), fsa.outputs)
    labels = list(fsa.output_alphabet)
    readout = TableMap([(0, 0)], [len(elems)], [labels.index(x) for x in fsa.outputs], len(labels))
    L = Layer("block_diagonal", d, trans, np.array([float(x) for x in H0]), TableMap.identity("input", len(elems)),
              dec, H0_exact=H0)
    return Model(list(fsa.alphabet), [L], readout, labels, name=f"rotations({fsa.name})",
                 provenance={"construction": "004-rotation-blocks", "paper": "004", "statement": "Proposition 2.3",
                             "automaton": fsa.to_dict(), "automaton_hash": fsa.content_hash()}), fsa


ABELIAN_CASES = [[2], [3], [4], [5], [6], [7], [12], [2, 2], [2, 4], [3, 3], [2, 2, 2], [2, 6]]


@entry("004:proposition-2.3", perturb={"angle_offset": 1})
def check_proposition_2_3(profile: str, angle_offset: int = 0) -> CheckResult:
    """``angle_offset`` (the perturbation 1) rotates by 2 pi k / (m + 1) for Z_m."""
    cases = ABELIAN_CASES if profile == "deep" else ABELIAN_CASES[:9]
    for m in (3, 5, 8, 12):
        M_ = m + angle_offset
        R = lambda k: [[cos2pi(k, M_), -sin2pi(k, M_)], [sin2pi(k, M_), cos2pi(k, M_)]]  # noqa: E731
        for a in range(m):
            for b in range(m):
                if mm(R(a), R(b)) != R((a + b) % m):
                    return CheckResult("falsified", "rotation homomorphism fails", counterexample=[m, a, b])
        P = eye(2)
        for _ in range(m):
            P = mm(R(1), P)
        if P != eye(2):
            return CheckResult("falsified", "R^m != I", counterexample=m)
    done = []
    for inv in cases:
        model, fsa = rotation_model(inv)
        c = certify(model, fsa, float_steps=200)
        if not c.certified:
            return CheckResult("falsified", f"rotation model fails for {fsa.name}: {c.reason}",
                               counterexample={"group": fsa.name, "word": c.counterexample})
        done.append(fsa.name)
    return CheckResult("holds", f"certified for every length: {', '.join(done)}")


# =========================================================================== Section 2.3: orthogonal -> rotation blocks
def _eig_multiplicity(A: list, root: int) -> int:
    import sympy
    x = sympy.Symbol("x")
    p = sympy.Matrix(A).charpoly(x).as_expr()
    k = 0
    while sympy.rem(p, x - root, x) == 0:
        p = sympy.quo(p, x - root, x)
        k += 1
    return k


@entry("004:section-2.3.orthogonal-rotation-form", perturb={"criterion": "always"})
def check_orthogonal_rotation_form(profile: str, criterion: str = "det") -> CheckResult:
    """``criterion``: the corrected characterization (``det``: det W = +1; the perturbation ``always`` is the
    printed claim that every orthogonal W pairs into rotation blocks)."""
    W = [[F(1), F(0)], [F(0), F(-1)]]
    printed_fails = det(W) == -1 and _eig_multiplicity(W, -1) % 2 == 1
    rng = np.random.default_rng(17)
    trials = 12 if profile == "quick" else 150
    for trial in range(trials):
        d = int(rng.choice([2, 4, 6]))
        S = random_skew(rng, d, -3, 4, 3)
        Q = cayley_orthogonal(S)
        if trial % 2:
            Q = [[-x for x in Q[0]]] + Q[1:]
        if trial % 3 == 0:   # force eigenvalues +-1 with multiplicity: blockdiag(Q', +-I)
            k = d // 2
            Q = [[Q[i][j] if i < k and j < k else F(0) for j in range(d)] for i in range(d)]
            Qk = cayley_orthogonal([r[:k] for r in S[:k]])
            for i in range(k):
                for j in range(k):
                    Q[i][j] = Qk[i][j]
            for i in range(k, d):
                Q[i][i] = F(1) if (i + trial) % 2 else F(-1)
        assert mm(tr(Q), Q) == eye(d)
        dq = det(Q)
        pairable = _eig_multiplicity(Q, 1) % 2 == 0 and _eig_multiplicity(Q, -1) % 2 == 0
        if pairable != (dq == 1 or criterion == "always"):
            return CheckResult("falsified", "corrected statement fails", counterexample=mstr(Q))
    if not printed_fails:
        return CheckResult("holds", "no counterexample")
    return CheckResult("holds-as-corrected", "diag(1, -1) refutes the claim; det = +1 characterization holds on "
                       f"{trials} exact orthogonal matrices", counterexample={"W": mstr(W), "det": "-1"},
                       corrected="similar to rotation blocks iff det W = +1")


# =========================================================================== Section 2.3: commutation
def _rot_scale(a: F, b: F) -> list:
    return [[a, -b], [b, a]]


@entry("004:section-2.3.commutation", perturb={"free_blocks": True})
def check_commutation(profile: str, free_blocks: bool = False) -> CheckResult:
    """``free_blocks`` (the perturbation) draws arbitrary 2 x 2 blocks instead of rotation-scalings a I + b J."""
    from hypothesis import strategies as st
    strat = st.tuples(st.integers(1, 4), st.integers(2, 6), st.integers(0, 2**31 - 1))

    def bad(args):
        d, T, seed = args
        rng = np.random.default_rng(seed)
        pattern = []
        left = d
        while left:
            s = 2 if left >= 2 and rng.random() < 0.5 else 1
            pattern.append(s)
            left -= s
        while True:
            P = [[F(int(v), 2) for v in row] for row in rng.integers(-3, 4, size=(d, d))]
            if det(P) != 0:
                break
        Pinv = solve(P, eye(d))
        Ws = []
        for _ in range(3):
            blocks = []
            for s in pattern:
                a, b = F(int(rng.integers(-4, 5)), 3), F(int(rng.integers(-4, 5)), 3)
                c = F(int(rng.integers(-4, 5)), 3)
                blocks.append([[a]] if s == 1 else [[a, b], [c, a + b]] if free_blocks else _rot_scale(a, b))
            Ws.append(mm(mm(P, block_diag(blocks)), Pinv))
        word = [int(v) for v in rng.integers(0, 3, size=T)]
        perm = [word[i] for i in rng.permutation(T)]
        h0 = [[F(int(v))] for v in rng.integers(-3, 4, size=d)]

        def run(w):
            h = h0
            for a in w:
                h = mm(Ws[a], h)
            return h
        return run(word) != run(perm) or mm(Ws[0], Ws[1]) != mm(Ws[1], Ws[0])

    cx = find_or_none(strat, bad, profile, 80, 2000)
    if cx is not None:
        return CheckResult("falsified", "non-commuting shared-basis transitions", counterexample=list(cx))
    J1, J2 = [[F(1), F(1)], [F(0), F(1)]], [[F(1), F(0)], [F(1), F(1)]]
    return CheckResult("holds", "states invariant under permutations of the word on every example",
                       details={"free_2x2_blocks_commute": mm(J1, J2) == mm(J2, J1)})


@entry("004:section-2.3.abelian-only", perturb={"groups": ("S3", "Z6")})
def check_abelian_only(profile: str, groups: tuple = ("S3", "D4", "D5", "A4", "D6")) -> CheckResult:
    """``groups``: the non-abelian groups tested (the perturbation adds the abelian Z6)."""
    nonab = list(groups) + (["S4"] if profile == "deep" else [])
    witnesses = {}
    for name in nonab:
        fsa = group_word_problem(name)
        pair = noncommuting_pair(fsa)
        if pair is None:
            return CheckResult("falsified", f"{name} found abelian", counterexample=name)
        a, b = pair
        out_ab = fsa.outputs[fsa.run([a, b])]
        out_ba = fsa.outputs[fsa.run([b, a])]
        if out_ab == out_ba:
            return CheckResult("falsified", "prefix products agree", counterexample=name)
        witnesses[name] = {"ab": [fsa.alphabet[a], fsa.alphabet[b]], "outputs": [out_ab, out_ba]}
    for name in ["Z6", "Z2xZ2", "Z2xZ4"]:
        if noncommuting_pair(group_word_problem(name)) is not None:
            return CheckResult("falsified", f"{name} not abelian?", counterexample=name)
    return CheckResult("holds", "every non-abelian group has a witness ab != ba; abelian groups have none",
                       details={"witnesses": witnesses})
