"""Small hand-built models (and their automata) for the precision demos and tests.

They follow the model format exactly (lrnnkit.model) and keep exact weights, so the float64 reference, the exact
executor and the certifier apply to them too:

* :func:`parity_scalar` — paper 000, Section 3.1 / Theorem 3 (``m = 2``): one layer, scalar state,
  ``A(0) = 1``, ``A(1) = lam`` (``lam = -1``: the reflection ``G(2, e_1)``, parity solved; ``lam in [0, 1]``: the
  positive-spectrum layer Theorem 1 rules out), ``H_0 = 1``, ``B = 0``, sign decoder.
* :func:`counter_rotation` — counting mod m on one letter (``counter:M``) by the rotation ``R(2 pi / m)``, stored as
  the product of two reflections (000, Theorem 3, cyclic case: ``A in M_2^2([-1, 1])``) or as a dense 2x2 matrix;
  nearest-reference decoder over the m states ``(cos 2 pi k/m, sin 2 pi k/m)``.
* :func:`counter_real` — counting mod m attempted with a real diagonal spectrum (Theorem 2's negative case).
* :func:`diagonal_layer_model`, :func:`deltanet_model` — one-letter models whose transition has spectrum in [0, 1]
  (Mamba-style diagonal, DeltaNet ``I - beta k k^T`` with ``beta in [0, 1]``), for Theorem 1.
* :func:`two_layer_period4` — two real-spectrum layers whose output has period 4 = 2^L on ``1^k`` (Theorem 2,
  multiple layers).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..automata.fsa import FSA
from ..exact import cos2pi, sin2pi, to_exact, to_float
from ..model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition

__all__ = ["parity_scalar", "parity_fsa", "counter_fsa", "counter_rotation", "counter_real", "diagonal_layer_model",
           "deltanet_model", "two_layer_period4"]


def parity_fsa() -> FSA:
    return FSA(("0", "1"), [[0, 1], [1, 0]], 0, None, ("0", "1"), None, "parity")


def counter_fsa(m: int) -> FSA:
    return FSA(("1",), [[(q + 1) % m] for q in range(m)], 0, None, tuple(str(q) for q in range(m)), None,
               f"counter:{m}")


def _prov(fsa: FSA, name: str, statement: str) -> dict:
    return {"construction": name, "paper": "000", "statement": statement, "automaton": fsa.to_dict(),
            "automaton_hash": fsa.content_hash()}


def _diag_transition(a, b) -> Transition:
    a = [to_exact(x) for x in a]
    b = [to_exact(x) for x in b]
    d = len(a)
    A = [[a[i] if i == j else Fraction(0) for j in range(d)] for i in range(d)]
    t = Transition.from_exact(A, b)
    t.diag = np.array([to_float(x) for x in a])
    return t


def parity_scalar(lam="-1") -> Model:
    """Parity over ``0 1`` with ``A(1) = lam`` (exact value, e.g. "-1", "1/2"), ``H_0 = 1``; output "0" iff H > 0."""
    fsa = parity_fsa()
    trans = [_diag_transition([1], [0]), _diag_transition([lam], [0])]
    dec = Decoder.exact([[1], [-1]], [0, 0], ["0", "1"])
    L = Layer("diagonal", 1, trans, np.array([1.0]), TableMap.identity("input", 2), dec, [Fraction(1)],
              ["0", "1"], ["h"], "parity")
    return Model(["0", "1"], [L], TableMap.identity(0, 2), ["0", "1"], f"parity-scalar[{lam}]",
                 _prov(fsa, "parity-scalar", "Theorem 3 (m = 2) / Theorem 1"))


def counter_rotation(m: int, form: str = "gh") -> Model:
    """Counting mod m on ``1`` by a rotation by 2 pi / m: ``form="gh"``: ``G(2, n_2) G(2, e_2)`` with
    ``n_2 = (-sin(pi/m), cos(pi/m))`` (reflection across the x axis, then across the line at angle pi/m);
    ``form="dense"``: the rotation matrix. ``H_0 = e_1``; nearest-reference decoder."""
    fsa = counter_fsa(m)
    c, s = cos2pi(1, m), sin2pi(1, m)
    if form == "gh":
        f1 = GHFactor.exact(2, [0, 1])
        f2 = GHFactor.exact(2, [-sin2pi(1, 2 * m), cos2pi(1, 2 * m)])
        t = Transition.from_factors([f1, f2], 2)
        kind = "gh"
    else:
        t = Transition.from_exact([[c, -s], [s, c]])
        kind = "dense"
    refs = [[cos2pi(k, m), sin2pi(k, m)] for k in range(m)]
    dec = Decoder.nearest(refs, [str(k) for k in range(m)])
    L = Layer(kind, 2, [t], np.array([1.0, 0.0]), TableMap.identity("input", 1), dec, [Fraction(1), Fraction(0)],
              ["1"], ["x", "y"], f"rotation 2pi/{m}")
    return Model(["1"], [L], TableMap.identity(0, m), [str(k) for k in range(m)], f"counter-rotation-{m}-{form}",
                 _prov(fsa, "counter-rotation", "Theorem 3 (cyclic case)"))


def counter_real(m: int, diag=("-1", "-1/2", "1/2")) -> Model:
    """Counting mod m attempted by a diagonal layer with real eigenvalues ``diag`` (Theorem 2 rules it out for m not
    a power of two): ``H_0 = 1``, ``B = 0``; decoder: nearest of m arbitrary reference states (the first m states of
    the exact orbit)."""
    fsa = counter_fsa(m)
    a = [to_exact(x) for x in diag]
    t = _diag_transition(a, [0] * len(a))
    refs = [[x ** k for x in a] for k in range(m)]
    dec = Decoder.nearest(refs, [str(k) for k in range(m)])
    d = len(a)
    L = Layer("diagonal", d, [t], np.ones(d), TableMap.identity("input", 1), dec, [Fraction(1)] * d, ["1"],
              [f"h{i}" for i in range(d)], "real diagonal")
    return Model(["1"], [L], TableMap.identity(0, m), [str(k) for k in range(m)], f"counter-real-{m}",
                 _prov(fsa, "counter-real", "Theorem 2 (negative case)"))


def diagonal_layer_model(a, b, h0=None, name="mamba-diagonal") -> Model:
    """One letter ``1``; a diagonal layer ``H <- diag(a) H + b`` (Mamba-style, a in [0, 1]); parity decoder on the
    first coordinate's sign relative to its start (any decoder fails on a constant state). Automaton: parity of the
    number of ones restricted to the letter ``1``, i.e. counter:2."""
    fsa = counter_fsa(2)
    d = len(a)
    h0 = [Fraction(0)] * d if h0 is None else [to_exact(x) for x in h0]
    t = _diag_transition(a, b)
    e = [[1] + [0] * (d - 1), [-1] + [0] * (d - 1)]
    dec = Decoder.exact(e, [0, 0], ["0", "1"])
    L = Layer("diagonal", d, [t], np.array([to_float(x) for x in h0]), TableMap.identity("input", 1), dec, h0,
              ["1"], [f"h{i}" for i in range(d)], name)
    return Model(["1"], [L], TableMap.identity(0, 2), ["0", "1"], name, _prov(fsa, name, "Theorem 1"))


def deltanet_model(beta="1/2", key=("3/5", "4/5"), value="1", name="deltanet") -> Model:
    """One letter ``1``; DeltaNet ``H <- (I - beta k k^T) H + beta k v`` with a rational unit key ``k``
    (eigenvalues ``1 - beta`` and 1), ``H_0 = 0``; decoder as :func:`diagonal_layer_model`. ``beta in [0, 1]``:
    Theorem 1's positive spectrum; ``beta = 2``: a reflection."""
    fsa = counter_fsa(2)
    beta = to_exact(beta)
    k = [to_exact(x) for x in key]
    v = to_exact(value)
    d = len(k)
    B = [beta * x * v for x in k]
    t = Transition.from_factors([GHFactor.exact(beta, k)], d, B_exact=B)
    e = [[1] + [0] * (d - 1), [-1] + [0] * (d - 1)]
    dec = Decoder.exact(e, [0, 0], ["0", "1"])
    L = Layer("gh", d, [t], np.zeros(d), TableMap.identity("input", 1), dec, [Fraction(0)] * d, ["1"],
              [f"h{i}" for i in range(d)], name)
    return Model(["1"], [L], TableMap.identity(0, 2), ["0", "1"], name, _prov(fsa, name, "Theorem 1"))


def two_layer_period4() -> Model:
    """Two real-spectrum layers on one letter: layer 0 is parity (``A = -1``, outputs 0, 1, 0, 1, ...); layer 1
    reads it and applies ``A = -1`` on output 1 and ``A = 1`` on output 0, so its state ``h, -h, -h, h, h, ...``
    has period 4 = 2^L (000, Theorem 2, multiple layers): it counts mod 4 and cannot count mod 3.
    Automaton: counter:4, output = count mod 4."""
    fsa = counter_fsa(4)
    t0 = _diag_transition([-1], [0])
    dec0 = Decoder.exact([[1], [-1]], [0, 0], ["0", "1"])     # "1" after an odd count
    L0 = Layer("diagonal", 1, [t0], np.array([1.0]), TableMap.identity("input", 1), dec0, [Fraction(1)], ["1"],
               ["h"], "parity")
    t1 = [_diag_transition([1], [0]), _diag_transition([-1], [0])]
    dec1 = Decoder.exact([[1], [-1]], [0, 0], ["+", "-"])
    L1 = Layer("diagonal", 1, t1, np.array([1.0]), TableMap.identity(0, 2), dec1, [Fraction(1)], ["even", "odd"],
               ["g"], "period 4")
    # count mod 4 from (parity y0, sign y1): t=1 (1,"-") t=2 (0,"-") t=3 (1,"+") t=4 (0,"+")
    table = np.zeros((2, 2), dtype=np.int64)
    table[1, 1], table[0, 1], table[1, 0], table[0, 0] = 1, 2, 3, 0
    ro = TableMap([Read(0, 0), Read(1, 0)], [2, 2], table.reshape(-1), 4)
    return Model(["1"], [L0, L1], ro, ["0", "1", "2", "3"], "two-layer-period-4",
                 _prov(fsa, "two-layer-period-4", "Theorem 2 (multiple layers)"))
