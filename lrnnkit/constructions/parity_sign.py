"""Parity (the group Z_2) with a scalar state and the eigenvalue -1 (paper 000, Section 4.1 eq. (3) and the
m = 2 case of Theorem 3, Appendix C.2).

Two printed constructions, both one layer of width 1 whose non-trivial letters apply the one reflection
``G(2, (1)) = -1`` (the identity letters apply no factor):

* ``parity-sign`` (Appendix C.2, m = 2): ``H_0 = -1``, ``A(0) = 1``, ``A(1) = -1``, ``B = 0``; ``g(-1) = 0``,
  ``g(1) = 1`` (decoder ``argmax((-H, H))``).
* ``parity-affine`` (Section 4.1, eq. (3)): ``h_t = a(x_t) h_{t-1} + b(x_t)``, ``h_0 = 0``,
  ``b(1) = a(0) = 1``, ``a(1) = -1`` (and ``b(0) = 0``, which the text leaves implicit), ``y_t = h_t``: the state
  is the parity itself (``h -> -h + 1`` flips 0 and 1). Decoder: nearest of the references 0 and 1.

Both apply to any automaton whose transition monoid is a group of order <= 2 (a letter acts as the identity or
as the non-trivial element).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Decoder, GHFactor, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register


def _structure(fsa):
    r = S.group_of(fsa)
    if isinstance(r, str):
        return r
    states, perms, G, _, letter_elem = r
    if G.order > 2:
        return f"the transition group has order {G.order}, not <= 2 (parity is Z_2)"
    return states, G, letter_elem


_reason = S.reason_of(_structure)


def _build(fsa, name: str, affine: bool, options) -> Model:
    r = S.structure_or_refuse(name, _structure, fsa, options)
    states, G, letter_elem = r
    flip = GHFactor.exact(2, [Fraction(1)])
    trans = []
    for a in range(fsa.n_letters):
        odd = letter_elem[a] != 0
        if affine:
            trans.append(Transition.from_factors([flip] if odd else [], 1, B_exact=[Fraction(int(odd))]))
        else:
            trans.append(Transition.from_factors([flip] if odd else [], 1))
    q0 = states.index(fsa.start)
    table = [S.output_index(fsa, states[int(G.elements[i][q0])]) for i in range(G.order)]
    if G.order == 1:
        table = table + table  # the second element never occurs; keep both decoder rows
    if affine:
        H0 = [Fraction(0)]
        dec = S.nearest_decoder([[Fraction(0)], [Fraction(1)]], ["even", "odd"])
    else:
        H0 = [Fraction(-1)]
        dec = Decoder.exact([[Fraction(-1)], [Fraction(1)]], [Fraction(0), Fraction(0)], ["even", "odd"])
    layer = Layer("gh", 1, trans, np.array([float(H0[0])]), S.input_identity(fsa), dec, H0,
                  symbol_names=list(fsa.alphabet), coords=["parity" if affine else "sign"], name=name)
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, 2, len(labels)), labels,
                 name=f"{name}({fsa.name})")


def build_sign(fsa, **options) -> Model:
    return _build(fsa, "parity-sign", False, options)


def build_affine(fsa, **options) -> Model:
    return _build(fsa, "parity-affine", True, options)


def _cost(fsa) -> Cost:
    """One layer of width 1; one factor (-1 = G(2, (1))) for an odd letter, none if every letter is even."""
    states, G, letter_elem = _structure(fsa)
    return Cost((1,), int(any(e != 0 for e in letter_elem)))


register(Construction(
    name="parity-sign", paper="000", statement="Theorem 3 (m = 2 case)",
    applies_to="automata whose transition monoid is a group of order <= 2 (parity)",
    build=build_sign, applicable=_reason, layers="1", width="1", factors_per_token="1 (0 for the identity)",
    priority=30, cost=_cost, notes="H0 = -1, A = -1 = G(2, (1)) for the odd letters, B = 0, dec = sign"))

register(Construction(
    name="parity-affine", paper="000", statement="Section 4.1, eq. (3)",
    applies_to="automata whose transition monoid is a group of order <= 2 (parity)",
    build=build_affine, applicable=_reason, layers="1", width="1", factors_per_token="1 (0 for the identity)",
    priority=29, cost=_cost, notes="h0 = 0, a(1) = -1, b(1) = 1, a(0) = 1, b(0) = 0, y = h"))
