"""Dihedral groups D_m in two DeltaNet layers (paper 001, Theorem 1 and its proof in Appendix B).

Group (001, eq. (3)): rotations ``r_i`` and reflections ``s_i``, ``i in Z_m``, with ``r_i r_j = r_{i+j}``,
``r_i s_j = s_{i+j}``, ``s_i r_j = s_{i-j}``, ``s_i s_j = r_{i-j}`` (products "first left, then right", the word
problem's order). An automaton whose transition group G is dihedral of order 2m is identified with this
presentation by choosing ``r`` of order m, ``s_0`` outside ``<r>``, and ``r_i = r^i``, ``s_i = r^i s_0``; the
identification is checked on the whole multiplication table.

Layer 1 (diagonal, width 2, as printed): ``h_0 = 0``, ``h_t = a(x_t) * h_{t-1} + b(x_t)`` with
``a(r) = (-1, 1)``, ``b(r) = (1, 0)``, ``a(s) = (1, -1)``, ``b(s) = (0, 1)``: coordinate 1 is the parity of the
number of rotations, coordinate 2 that of reflections. Its output is the pair of parities (nearest of the four
0/1 references). Layer 2 (GH, width 2, one reflection per token): ``h_0 = (1, 0)``,
``h_t = H(theta(x_t, y_2)) h_{t-1}`` with ``y_2`` the rotation parity after ``x_t`` and ``H(alpha)`` the reflection
in the line at angle ``alpha / 2`` (``H(alpha) = I - 2 n n^T``, ``n = (-sin(alpha/2), cos(alpha/2))``);

    printed:   theta(r_i, 1) = (1 - 2i) pi/m,  theta(r_i, 0) = (1 + 2i) pi/m,
               theta(s_i, 1) = -2i pi/m,       theta(s_i, 0) = (2 + 2i) pi/m.

(The extraction prints ``theta(s_j, 1) = -2i pi/m`` and ``theta(s_i, 0) = (2 + 2j) pi/m``, mixing the indices; we
read them with one index.) Decoder (as printed): ``i* = argmax_i max(c_i^T h, d_i^T h)`` over ``d_i = R(2 i pi/m)
d_0``, ``d_0 = (1, 0)``, ``c_i = R(-2 i pi/m) c_0``, ``c_0 = H(pi/m) d_0``; the output is ``r_{i*}`` if the reflection
parity ``y_3`` is 0 and ``s_{m - i*}`` if it is 1. In the model: layer 2's linear-argmax decoder has the 2m rows
``c_0..c_{m-1}, d_0..d_{m-1}`` and the readout table maps (layer-2 row, layer-1 parities) to the group element.

Finding (certify, exact BFS): the printed angles fail for every m >= 2 on the one-letter word ``s_0`` (for m = 2:
``h_1 = H(2 pi/2) d_0 = (-1, 0) = d_1``, decoded ``s_{2-1} = s_1`` instead of ``s_0``). The proof applies
``H(theta(s_j, 1))`` to d-states, but the state is a d-vector exactly when the rotation parity is 0. Corrected
construction (``dihedral-deltanet``): the reflection letters take the opposite parity argument,
``theta(s_i, 0) = -2i pi/m``, ``theta(s_i, 1) = (2 + 2i) pi/m``; everything else as printed. It certifies for
D_1..D_12. The printed version stays available as ``dihedral-deltanet-as-printed``.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "dihedral-deltanet"
PRINTED = "dihedral-deltanet-as-printed"


def dihedral_structure(fsa):
    """``(states, m, kind, index, elem_of)``: letter a is ``r_{index[a]}`` (kind "r") or ``s_{index[a]}`` (kind
    "s"); ``elem_of[(kind, i)]`` is the element as an image list on the reachable states. Reason string if the
    transition group is not dihedral of order 2m (m >= 1)."""
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    states, perms, G, _, letter_elem = r
    N = G.order
    if N % 2:
        return f"the transition group has odd order {N}, so it is not dihedral"
    m = N // 2
    E = G.elements
    ident = np.arange(len(states))
    rot_candidates = [i for i in range(N) if G.element_order(i) == m]
    for ri in rot_candidates:
        rr = E[ri]
        powers = [ident]
        for _ in range(m - 1):
            powers.append(rr[powers[-1]])              # r^{k+1} = r^k then r
        pset = {p.tobytes() for p in powers}
        s0 = next((E[i] for i in range(N) if E[i].tobytes() not in pset), None)
        if s0 is None:
            continue
        elems = {("r", i): powers[i] for i in range(m)}
        elems.update({("s", i): s0[powers[i]] for i in range(m)})     # s_i = r^i then s_0
        if len({e.tobytes() for e in elems.values()}) != N:
            continue

        def mul(x, y):
            (a, i), (b, j) = x, y
            if a == "r":
                return (b, (i + j) % m)
            return ("s" if b == "r" else "r", (i - j) % m)
        ok = True
        for x, ex in elems.items():
            for y, ey in elems.items():
                if not np.array_equal(ey[ex], elems[mul(x, y)]):    # first x, then y
                    ok = False
                    break
            if not ok:
                break
        if not ok:
            continue
        by_bytes = {e.tobytes(): k for k, e in elems.items()}
        kinds, idx = [], []
        for a in range(fsa.n_letters):
            k = by_bytes[E[letter_elem[a]].tobytes()]
            kinds.append(k[0])
            idx.append(k[1])
        return states, m, kinds, idx, elems
    return f"the transition group (order {N}) is not dihedral D_{m}"


_reason = S.reason_of(dihedral_structure)


def theta(kind: str, i: int, parity: int, m: int, corrected: bool) -> int:
    """The reflection angle of layer 2 as an integer multiple k of pi/m (001, App. B)."""
    if kind == "r":
        return (1 - 2 * i) if parity == 1 else (1 + 2 * i)
    if corrected:
        parity = 1 - parity
    return -2 * i if parity == 1 else 2 + 2 * i


def reflection_factor(k: int, m: int) -> GHFactor:
    """``H(k pi/m)``: the reflection in the line at angle ``k pi/(2m)``; normal ``(-sin, cos)`` of that angle."""
    return GHFactor.exact(2, [-S.sin_frac(k, 4 * m), S.cos_frac(k, 4 * m)])


def _build(fsa, corrected: bool, options) -> Model:
    name = NAME if corrected else PRINTED
    r = S.structure_or_refuse(name, dihedral_structure, fsa, options)
    states, m, kinds, idx, elems = r
    k = fsa.n_letters
    # ---- layer 1: diagonal parities (rotation, reflection)
    t_rot = Transition.from_exact([[-1, 0], [0, 1]], [1, 0])
    t_rot.diag = np.array([-1.0, 1.0])
    t_ref = Transition.from_exact([[1, 0], [0, -1]], [0, 1])
    t_ref.diag = np.array([1.0, -1.0])
    in1 = TableMap([Read("input", 0)], [k], np.array([0 if kd == "r" else 1 for kd in kinds]), 2)
    refs1 = [[Fraction(a), Fraction(b)] for a in (0, 1) for b in (0, 1)]          # index = 2 p_rot + p_ref
    dec1 = S.nearest_decoder(refs1, ["rot even, ref even", "rot even, ref odd", "rot odd, ref even",
                                     "rot odd, ref odd"])
    L1 = Layer("diagonal", 2, [t_rot, t_ref], np.zeros(2), in1, dec1, [Fraction(0), Fraction(0)],
               symbol_names=["rotation", "reflection"], coords=["rotation parity", "reflection parity"],
               name="parities")
    # ---- layer 2: one reflection per (letter, rotation parity)
    trans2, names2, table2 = [], [], []
    for a in range(k):
        for p in (0, 1):
            th = theta(kinds[a], idx[a], p, m, corrected)
            trans2.append(Transition.from_factors([reflection_factor(th % (2 * m), m)], 2))
            names2.append(f"{fsa.alphabet[a]}|rot parity {p}")
    for a in range(k):
        for y1 in range(4):
            table2.append(2 * a + (y1 // 2))
    in2 = TableMap([Read("input", 0), Read(0, 0)], [k, 4], np.array(table2), 2 * k)
    # c_i at angle (1 - 2i) pi/m, d_i at angle 2 i pi/m
    cs = [[S.cos_frac(1 - 2 * i, 2 * m), S.sin_frac(1 - 2 * i, 2 * m)] for i in range(m)]
    ds = [[S.cos_frac(2 * i, 2 * m), S.sin_frac(2 * i, 2 * m)] for i in range(m)]
    dec2 = Decoder.exact(cs + ds, [Fraction(0)] * (2 * m), [f"c{i}" for i in range(m)] + [f"d{i}" for i in range(m)])
    L2 = Layer("gh", 2, trans2, np.array([1.0, 0.0]), in2, dec2, [Fraction(1), Fraction(0)],
               symbol_names=names2, coords=["x", "y"], name="reflections")
    # ---- readout: (layer-2 row j, parities) -> r_{i*} / s_{m - i*}, i* = j mod m
    q0 = states.index(fsa.start)
    labels = S.output_labels(fsa)
    table = []
    for j in range(2 * m):
        istar = j % m
        for y1 in range(4):
            p_ref = y1 % 2
            el = ("r", istar) if p_ref == 0 else ("s", (m - istar) % m)
            table.append(S.output_index(fsa, states[int(elems[el][q0])]))
    readout = TableMap([Read(1, 0), Read(0, 0)], [2 * m, 4], np.array(table), len(labels))
    return Model(list(fsa.alphabet), [L1, L2], readout, labels, name=f"{name}({fsa.name})",
                 notes={"m": m, "angles": "corrected (reflection letters use the opposite parity)" if corrected
                        else "as printed"})


def build(fsa, **options) -> Model:
    return _build(fsa, True, options)


def build_printed(fsa, **options) -> Model:
    return _build(fsa, False, options)


register(Construction(
    name=NAME, paper="001", statement="Theorem 1 (corrected angles)",
    applies_to="automata whose transition group is dihedral D_m (order 2m)",
    build=build, applicable=_reason, layers="2", width="2, 2 (layer 1 diagonal, layer 2 reflections)",
    factors_per_token="layer 1: diagonal +-1 (1 sign flip); layer 2: 1 reflection",
    priority=5, cost=lambda fsa: Cost((2, 2), 1),
    notes="theta(s_i, 0) = -2i pi/m, theta(s_i, 1) = (2 + 2i) pi/m; rotations as printed"))

register(Construction(
    name=PRINTED, paper="001", statement="Theorem 1 (as printed, Appendix B)",
    applies_to="automata whose transition group is dihedral D_m (order 2m)",
    build=build_printed, applicable=_reason, layers="2", width="2, 2",
    factors_per_token="layer 1: diagonal; layer 2: 1 reflection", priority=-100, variant_of=NAME,
    notes="fails for every m >= 2 on the word s_0 (exact BFS); kept for the record"))
