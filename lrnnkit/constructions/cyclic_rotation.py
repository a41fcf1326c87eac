"""Cyclic groups by 2-D rotations, each the product of two reflections (paper 000, Section 4.2 and the Z_m case
of Theorem 3, Appendix C.2).

Statement (000, Theorem 3, "Moreover"): if ``T(A)`` is isomorphic to the cyclic group ``Z_m`` then
``A: Sigma -> M_2([-1, 1])`` (2 x 2 matrices, two GH factors per token). Construction (Section 4.2 and Appendix
C.2): identify ``T(A)`` with ``Z_m`` through a generator ``g`` (letter ``w`` acts as ``g^{e_w}``), set
``H_0 = (1, 0)^T``, ``B = 0`` and ``A(w) = R(theta_w)``, ``theta_w = 2 pi e_w / m``, with

    R(theta) = (I - 2 v_1 v_1^T)(I - 2 v_2 v_2^T),     v_2 = (0, 1),   v_1 = (-sin(theta/2), cos(theta/2))

(the reflection ``Ref(phi) = I - 2 n n^T``, ``n = (-sin phi, cos phi)``, mirrors in the line at angle ``phi``, and
``Ref(phi_1) Ref(phi_2) = R(2 (phi_1 - phi_2))``; the paper asserts the existence of ``v_1, v_2`` without giving
them, so these are our choice). Decoder (Section 4.2): ``dec(H) = argmax_i D_i^T H`` with
``D_i = R(i theta) H_0 = (cos(2 pi i/m), sin(2 pi i/m))``; state ``i`` decodes to the automaton state ``q0 . g^i``.

Exactness: ``cos(pi e/m)``, ``sin(pi e/m)`` lie in a cyclotomic field (lrnnkit.exact), and ``|v_1|^2 = 1``
exactly, so the GH factors are exact and certification is an exact BFS. The identity letter uses no factor.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Decoder, GHFactor, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "cyclic-rotation"


def cyclic_structure(fsa):
    """``(states, m, exponents, gen_element)`` for an automaton whose transition group is cyclic of order m:
    letter a acts as ``g^{exponents[a]}`` for a generator g (an image list on the reachable states). Returns a
    reason string when the transition monoid is not a cyclic group."""
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    states, perms, G, _, letter_elem = r
    m = G.order
    if not G.is_abelian():
        return f"the transition group (order {m}) is not abelian, hence not cyclic"
    gen = next((i for i in range(m) if G.element_order(i) == m), None)
    if gen is None:
        return f"the transition group (order {m}) is abelian but not cyclic"
    g = G.elements[gen]
    power = np.arange(len(states), dtype=np.int64)
    exp_of = {}
    for e in range(m):
        exp_of[G.index[power.tobytes()]] = e
        power = g[power]
    return states, m, [exp_of[letter_elem[a]] for a in range(fsa.n_letters)], g


_reason = S.reason_of(cyclic_structure)


def rotation_factors(e: int, m: int) -> list[GHFactor]:
    """Two reflections whose product ``G_2 G_1`` is the rotation by ``2 pi e / m`` (none for e = 0 mod m)."""
    e %= m
    if e == 0:
        return []
    v2 = [Fraction(0), Fraction(1)]
    v1 = [-S.sin_frac(e, 2 * m), S.cos_frac(e, 2 * m)]
    return [GHFactor.exact(2, v2), GHFactor.exact(2, v1)]


def build(fsa, **options) -> Model:
    r = S.structure_or_refuse(NAME, cyclic_structure, fsa, options)
    states, m, exps, g = r
    transitions = [Transition.from_factors(rotation_factors(e, m), 2) for e in exps]
    H0 = [Fraction(1), Fraction(0)]
    D = [[S.cos_frac(i, m), S.sin_frac(i, m)] for i in range(m)]
    q0 = states.index(fsa.start)
    table, names = [], []
    q = q0
    for i in range(m):
        table.append(S.output_index(fsa, states[q]))
        names.append(f"g^{i}")
        q = int(g[q])
    dec = Decoder.exact(D, [Fraction(0)] * m, names)
    layer = Layer("gh", 2, transitions, np.array([1.0, 0.0]), S.input_identity(fsa), dec, H0,
                  symbol_names=list(fsa.alphabet), coords=["cos", "sin"], name=f"rotation Z_{m}")
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, m, len(labels)), labels,
                 name=f"{NAME}({fsa.name})",
                 notes={"group_order": m, "exponents": exps})


def _cost(fsa) -> Cost:
    """One layer of width 2; two reflections per token (none when the group is trivial)."""
    return Cost((2,), 2 if cyclic_structure(fsa)[1] > 1 else 0)


register(Construction(
    name=NAME, paper="000", statement="Theorem 3 (Z_m case), Section 4.2",
    applies_to="automata whose transition monoid is a cyclic group Z_m",
    build=build, applicable=_reason, layers="1", width="2", factors_per_token="2 (0 for the identity)",
    priority=20, cost=_cost,
    notes="A(w) = R(2 pi e_w / m) = Ref(pi e_w / m) Ref(0), H0 = (1, 0), dec = argmax_i D_i^T H, D_i = R(i theta) H0",
))
