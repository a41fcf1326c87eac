"""The block-diagonal input-dependent LRNN with column p-norm normalization (paper 002, Section 3.3, eqs. (5)-(6)).

Model (002, eq. (5)): ``x_k = A_k x_{k-1} + B u_k`` with ``A_k = diag(A_k^(1), ..., A_k^(h))`` block diagonal,
``A_k^(i) = [v^(i,1) ... v^(i,b)]`` and every column normalized (002, eq. (6)): ``v' = v / max(1, ||v||_p)`` (the
paper uses p = 1.2).

Which exact weights survive the normalization (``normalize_columns(A, p) == A``)? Exactly the matrices whose
columns all have ``||v||_p <= 1``. For the finite-group weights of the other constructions:

* 0/1 matrices with one 1 per column (permutation matrices, and the one-hot transition matrices of ANY automaton,
  resets included): ``||e_q||_p = 1`` for every p, so they survive for every p >= 1;
* signed permutation matrices survive for every p;
* an orthogonal matrix has ``||v||_2 = 1`` per column and ``||v||_p > ||v||_2`` for p < 2 unless v has a single
  non-zero entry: for 1 <= p < 2 an orthogonal matrix survives iff it is a signed permutation matrix. So the
  rotation blocks of the Z_m constructions (m not in {1, 2, 4}) and the reflections of Theorem 6 / 001 Theorem 1
  are rescaled (by ``1/(|cos|^p + |sin|^p)^{1/p}``), their states shrink geometrically and no exact finite-state
  setting remains; for p >= 2 every orthogonal matrix survives.

Exact settings for the paper's tasks (002, Section 4): Sum(M) = ``group:Z<M>`` / ``counter``, EvenPair(M) =
``even-pairs:M``, ModArith(M) = ``mod-arith:M``: one block holding the one-hot transition matrix of the task's
automaton (``b = |Q|``, ``h = 1``, ``B = 0``, ``x_0 = e_{q0}``), unchanged by the normalization for every p; decoder
argmax (one-hot). :func:`build` applies to any automaton; layer kind "block_diagonal".
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..model import Decoder, Layer, Model, Transition
from . import _support as S
from .registry import Construction, Cost, register

NAME = "block-diagonal-normalized"


def normalize_columns(A: np.ndarray, p: float = 1.2) -> np.ndarray:
    """002, eq. (6): every column v -> v / max(1, ||v||_p) (float64)."""
    A = np.asarray(A, dtype=np.float64)
    norms = np.sum(np.abs(A) ** p, axis=0) ** (1.0 / p)
    return A / np.maximum(1.0, norms)[None, :]


def survives_exact(A_exact, p) -> bool:
    """Exactly: is every column p-norm <= 1 (so the normalization leaves A unchanged)? Exact for rational entries
    and rational p = 1 or p = 2 (``sum |v_i|^p <= 1``); other p are decided for 0/+-1 columns only."""
    p = Fraction(p)
    n = len(A_exact)
    for j in range(n):
        col = [Fraction(A_exact[i][j]) for i in range(n)]
        if all(x in (0, 1, -1) for x in col):
            if sum(1 for x in col if x != 0) > 1:
                return False
            continue
        if p == 1:
            s = sum(abs(x) for x in col)
        elif p == 2:
            s = sum(x * x for x in col)
        else:
            raise InputError(f"survives_exact: p = {p} with non-0/1 entries is not decided exactly")
        if s > 1:
            return False
    return True


def build(fsa, p: float = 1.2, **options) -> Model:
    if options:
        raise InputError(f"{NAME}: unknown option(s) {sorted(options)}")
    if not p >= 1:
        raise InputError(f"{NAME}: p must be >= 1, got {p!r}")
    n, k = fsa.n_states, fsa.n_letters
    trans = []
    for a in range(k):
        A = np.zeros((n, n))
        A[fsa.delta[:, a], np.arange(n)] = 1.0
        An = normalize_columns(A, p)
        assert np.array_equal(An, A)          # one-hot columns: ||e_q||_p = 1, the normalization is the identity
        A_ex = [[Fraction(int(fsa.delta[q, a] == r)) for q in range(n)] for r in range(n)]
        trans.append(Transition(An, np.zeros(n), None, A_ex, [Fraction(0)] * n, blocks=[An]))
    H0 = [Fraction(int(q == fsa.start)) for q in range(n)]
    I = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    dec = Decoder.exact(I, [Fraction(0)] * n, [f"q{q}" for q in range(n)])
    layer = Layer("block_diagonal", n, trans, np.array([float(x) for x in H0]), S.input_identity(fsa), dec, H0,
                  symbol_names=list(fsa.alphabet), coords=[f"state {q}" for q in range(n)],
                  name=f"one block, p = {p}")
    labels = S.output_labels(fsa)
    return Model(list(fsa.alphabet), [layer], S.readout_from_layer(0, [S.output_index(fsa, q) for q in range(n)],
                                                                   n, len(labels)), labels,
                 name=f"{NAME}({fsa.name})",
                 notes={"p": p, "blocks": 1, "block_size": n})


register(Construction(
    name=NAME, paper="002", statement="Section 3.3, eqs. (5)-(6)",
    applies_to="any automaton (Sum, EvenPair, ModArith in particular)", build=build, applicable=None,
    layers="1", width="|Q| (one block, b = |Q|, h = 1)", factors_per_token="n/a (block-diagonal 0/1)",
    priority=-30, cost=lambda fsa: Cost((fsa.n_states,), None, gh=False),
    notes="one-hot transition blocks survive the column p-norm normalization for every p >= 1",
    options={"p": "the column norm of eq. (6) (default 1.2)"}))
