"""Addition modulo m with two layers of pure reflections (paper 000, Theorem 6, Appendix D).

Statement (000, Theorem 6): an LRNN with two layers, ``A: N -> {-1}`` in the first and ``A: R^2 -> M^2_1({-1})``
(one 2 x 2 reflection per token) in the second, performs addition modulo m; 2 scalar states in layer 1 and 2m
states (vectors of R^2) in layer 2.

Construction (as printed, Appendix D). Layer 1 counts time modulo 2: ``h_0 = 0``, ``h_t = -h_{t-1} + 1`` for every
token (so ``h_t = t mod 2``), output ``(x_t, h_t)``. Layer 2: ``h_0 = d_0 = (1, 0)``,
``h_t = H(theta(x_t, t mod 2)) h_{t-1}``, ``H(alpha)`` the reflection in the line at angle ``alpha / 2``,

    theta(i, 1) = (1 - 2i) pi / m,     theta(i, 0) = (2i + 1) pi / m,

and ``dec = argmax_i max(c_i^T h, d_i^T h)`` with ``d_i = R(2 i pi/m) d_0`` and ``c_i = R(-2 i pi/m) c_0``,
``c_0 = H(theta(0, 1)) d_0`` (angles ``2 i pi/m`` and ``(1 - 2i) pi/m``). The proof shows ``h_t = c_{y_t}`` for odd
t and ``d_{y_t}`` for even t, ``y_t = x_1 + ... + x_t mod m``.

Here the input letters may be any automaton whose transition group is cyclic (letter w acts as ``g^{e_w}``; the
construction adds the exponents). In the model the layer-1 output is ``t mod 2``; layer 2 reads the input and that
bit; its decoder rows are ``c_0..c_{m-1}, d_0..d_{m-1}`` and the readout maps row j to ``q0 . g^{j mod m}``.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition
from . import _support as S
from .cyclic_rotation import cyclic_structure
from .dihedral_two_layer import reflection_factor
from .registry import Construction, Cost, register

NAME = "modadd-reflections"


def theta(i: int, parity: int, m: int) -> int:
    """theta(i, parity) as an integer multiple of pi/m (000, App. D)."""
    return (1 - 2 * i) if parity == 1 else (2 * i + 1)


_reason = S.reason_of(cyclic_structure)


def build(fsa, **options) -> Model:
    r = S.structure_or_refuse(NAME, cyclic_structure, fsa, options)
    states, m, exps, g = r
    k = fsa.n_letters
    flip = GHFactor.exact(2, [Fraction(1)])
    t1 = Transition.from_factors([flip], 1, B_exact=[Fraction(1)])
    in1 = TableMap([Read("input", 0)], [k], np.zeros(k, dtype=np.int64), 1)
    dec1 = S.nearest_decoder([[Fraction(0)], [Fraction(1)]], ["t even", "t odd"])
    L1 = Layer("gh", 1, [t1], np.zeros(1), in1, dec1, [Fraction(0)], symbol_names=["any token"],
               coords=["t mod 2"], name="time parity")
    trans2, names2, table2 = [], [], []
    for a in range(k):
        for p in (0, 1):
            trans2.append(Transition.from_factors([reflection_factor(theta(exps[a], p, m) % (2 * m), m)], 2))
            names2.append(f"{fsa.alphabet[a]}|t mod 2 = {p}")
            table2.append(2 * a + p)
    in2 = TableMap([Read("input", 0), Read(0, 0)], [k, 2], np.array(table2), 2 * k)
    cs = [[S.cos_frac(1 - 2 * i, 2 * m), S.sin_frac(1 - 2 * i, 2 * m)] for i in range(m)]
    ds = [[S.cos_frac(2 * i, 2 * m), S.sin_frac(2 * i, 2 * m)] for i in range(m)]
    dec2 = Decoder.exact(cs + ds, [Fraction(0)] * (2 * m), [f"c{i}" for i in range(m)] + [f"d{i}" for i in range(m)])
    L2 = Layer("gh", 2, trans2, np.array([1.0, 0.0]), in2, dec2, [Fraction(1), Fraction(0)],
               symbol_names=names2, coords=["x", "y"], name="reflections")
    q0 = states.index(fsa.start)
    powers = [q0]
    for _ in range(m - 1):
        powers.append(int(g[powers[-1]]))
    labels = S.output_labels(fsa)
    table = [S.output_index(fsa, states[powers[j % m]]) for j in range(2 * m)]
    readout = TableMap([Read(1, 0)], [2 * m], np.array(table), len(labels))
    return Model(list(fsa.alphabet), [L1, L2], readout, labels, name=f"{NAME}({fsa.name})",
                 notes={"m": m, "exponents": exps})


register(Construction(
    name=NAME, paper="000", statement="Theorem 6",
    applies_to="automata whose transition group is cyclic Z_m (addition modulo m)",
    build=build, applicable=_reason, layers="2", width="1, 2", factors_per_token="1 reflection per layer",
    priority=2, cost=lambda fsa: Cost((1, 2), 1),
    notes="layer 1: h -> -h + 1 (t mod 2); layer 2: H(theta(x, t mod 2)), theta(i,1) = (1-2i) pi/m, "
          "theta(i,0) = (2i+1) pi/m; decoder argmax over c_i, d_i"))
