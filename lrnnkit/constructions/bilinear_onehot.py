"""The bilinear RNN's one-hot simulation of any finite-state machine (paper 004, Appendix, "simulating arbitrary
state machines"; the extraction lost the formulas, reconstructed here).

Bilinear RNN (004, eq. (3)): ``h_t = W(x_t) h_{t-1}`` with ``W(x) = sum_k x_k W_k`` (a third-order tensor
contracted with the input embedding). With the one-hot input embedding ``x = e_a`` and the slices
``W_a = M(a)``, ``M(a)[q', q] = 1`` iff ``delta(q, a) = q'``, the state ``h_t = e_{q_t}`` is the one-hot code of the
automaton's state: ``M(a) e_q = e_{delta(q, a)}``. Decoder: ``argmax_q h_q`` (one-hot readout), then the state's
output label.

Every entry is 0 or 1, every product of letter matrices is again a 0/1 matrix with one 1 per column, so the
construction is exact in every floating-point format (0 and 1 are representable and sums have one non-zero
term). Applies to every automaton; width ``|Q|``, one layer, layer kind "bilinear" (the matrices need not be
orthogonal: resets and merges are 0/1 matrices of norm up to sqrt(``|Q|``), so they are not GH products in general).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..model import Decoder, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "bilinear-onehot"


def build(fsa, **options) -> Model:
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)}")
    n, k = fsa.n_states, fsa.n_letters
    trans = []
    for a in range(k):
        A = np.zeros((n, n))
        A[fsa.delta[:, a], np.arange(n)] = 1.0
        A_ex = [[Fraction(int(fsa.delta[q, a] == p)) for q in range(n)] for p in range(n)]
        trans.append(Transition(A, np.zeros(n), None, A_ex, [Fraction(0)] * n))
    H0 = [Fraction(int(q == fsa.start)) for q in range(n)]
    I = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    dec = Decoder.exact(I, [Fraction(0)] * n, [f"q{q}" for q in range(n)])
    layer = Layer("bilinear", n, trans, np.array([float(x) for x in H0]), S.input_identity(fsa), dec, H0,
                  symbol_names=list(fsa.alphabet), coords=[f"state {q}" for q in range(n)], name="one-hot")
    labels = S.output_labels(fsa)
    table = [S.output_index(fsa, q) for q in range(n)]
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, table, n, len(labels)), labels,
                 name=f"{NAME}({fsa.name})")


register(Construction(
    name=NAME, paper="004", statement="Appendix (simulating any FSM)", applies_to="any automaton",
    build=build, applicable=None, layers="1", width="|Q|", factors_per_token="n/a (bilinear 0/1 matrix)",
    priority=-20, cost=lambda fsa: Cost((fsa.n_states,), None, gh=False),
    notes="W(a) = transition matrix M(a) (0/1), h0 = e_{q0}, decoder = argmax (one-hot)"))
