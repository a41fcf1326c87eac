"""The pieces of one LRNN layer (paper 000, eq. 1): what a layer reads, what each of its symbols does, and how it
decodes its state.

* :class:`Read` and :class:`TableMap`: a layer's input map (and the model's readout), a finite function of the model
  input and of the outputs of the layers below, each possibly read with a lag.
* :class:`GHFactor`: ``G = I - beta v v^T`` (``||v|| = 1``, ``beta in [0, 2]``), exactly ``I - beta u u^T / (u^T u)``.
* :class:`Transition`: what one layer symbol does, ``H <- A H + B``.
* :class:`Decoder`: linear-argmax, ``y = argmax_j (W H + c)_j``.
* :class:`Layer`: a kind (:data:`LAYER_KINDS`), a width, one transition per symbol, ``H0``, the input map and the
  decoder.

The model that stacks layers is :class:`lrnnkit.model.ir.Model`; the semantics are in :mod:`lrnnkit.model.ir`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..exact import Cyc, to_exact, to_float
from .linalg import exact_identity, exact_matmul, gh_matrix_exact, gh_matrix_float

__all__ = ["Read", "TableMap", "GHFactor", "Transition", "Decoder", "Layer", "LAYER_KINDS", "need_fields"]

LAYER_KINDS = ("gh", "diagonal", "block_diagonal", "bilinear", "dense")


def _floats_of(exact_rows) -> np.ndarray:
    """The float64 rounding of a matrix of exact values."""
    return np.array([[to_float(v) for v in r] for r in exact_rows], dtype=np.float64)


def need_fields(d: Any, keys: Sequence[str], where: str) -> None:
    """InputError naming ``where`` unless ``d`` is a JSON object with every one of ``keys``."""
    if not isinstance(d, dict):
        raise InputError(f"{where}: expected a JSON object")
    missing = [k for k in keys if k not in d]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")


# --------------------------------------------------------------------------- table maps
@dataclass(frozen=True)
class Read:
    """One source a table map reads: ``"input"`` (the model token) or a layer index, at a lag (0 = this step).
    Before the sequence start (t - lag < 1) a lagged read gives the pad value ``size - 1`` (BOS)."""
    source: Any  # "input" | int
    lag: int = 0

    def at_lag(self, values, size: int, xp=np):
        """The source's values as this read sees them, the lag rule written once (paper 000, eq. 1 with lagged
        reads): step ``t`` reads ``values[:, t - lag]``, and the pad ``size - 1`` (BOS) where ``t - lag < 0``.
        ``values`` is a (B, T) integer array of the namespace ``xp`` (numpy, or torch for tensors on any device:
        the pad is built from the values so that it keeps their dtype and device)."""
        T = values.shape[1]
        k = min(self.lag, T)
        if not k:
            return values
        return xp.concatenate([values[:, :k] * 0 + (size - 1), values[:, :T - k]], axis=1)


@dataclass
class TableMap:
    """A finite function of the values read: ``table[ravel_multi_index(values, sizes)]`` -> an index in
    ``0..n_out-1``. ``sizes[i]`` counts the values of read i, including the BOS pad when its lag > 0."""
    reads: list
    sizes: list
    table: np.ndarray
    n_out: int

    def __post_init__(self):
        self.reads = [r if isinstance(r, Read) else Read(r[0], r[1]) for r in self.reads]
        self.sizes = [int(s) for s in self.sizes]
        self.table = np.asarray(self.table, dtype=np.int64).reshape(-1)
        total = int(np.prod(self.sizes)) if self.sizes else 1
        if len(self.reads) != len(self.sizes):
            raise InputError(f"table map: {len(self.reads)} reads but {len(self.sizes)} sizes")
        if self.table.size != total:
            raise InputError(f"table map: table has {self.table.size} entries, sizes {self.sizes} need {total}")
        if self.table.size and (self.table.min() < 0 or self.table.max() >= self.n_out):
            raise InputError(f"table map: entries must lie in 0..{self.n_out - 1}")

    @staticmethod
    def identity(source, size: int) -> "TableMap":
        return TableMap([Read(source, 0)], [size], np.arange(size), size)

    def lookup(self, values: Sequence[int]) -> int:
        idx = 0
        for v, s in zip(values, self.sizes):
            idx = idx * s + int(v)
        return int(self.table[idx])

    def lookup_batch(self, values: Sequence[np.ndarray]) -> np.ndarray:
        idx = np.zeros_like(np.asarray(values[0]), dtype=np.int64) if values else np.zeros((), np.int64)
        for v, s in zip(values, self.sizes):
            idx = idx * s + np.asarray(v, dtype=np.int64)
        return self.table[idx]

    def to_json(self) -> dict:
        return {"reads": [[r.source, r.lag] for r in self.reads], "sizes": self.sizes,
                "table": self.table.tolist(), "n_out": self.n_out}

    @staticmethod
    def from_json(d: dict, where: str) -> "TableMap":
        need_fields(d, ("reads", "sizes", "table", "n_out"), where)
        reads = []
        for r in d["reads"]:
            if not (isinstance(r, list) and len(r) == 2 and (r[0] == "input" or isinstance(r[0], int))
                    and isinstance(r[1], int) and r[1] >= 0):
                raise InputError(f"{where}: bad read {r!r} (expected [\"input\" or layer index, lag >= 0])")
            reads.append(Read(r[0], r[1]))
        return TableMap(reads, d["sizes"], d["table"], d["n_out"])


# --------------------------------------------------------------------------- transitions
@dataclass
class GHFactor:
    """``G = I - beta v v^T``. ``beta``/``v`` float64 (v unit); ``beta_exact``/``u_exact`` optional exact form
    with ``u`` a nonzero multiple of ``v``."""
    beta: float
    v: np.ndarray
    beta_exact: Any = None
    u_exact: list | None = None

    @staticmethod
    def exact(beta, u: Sequence) -> "GHFactor":
        """Build a factor from exact ``beta`` and exact direction ``u`` (not necessarily unit)."""
        beta = to_exact(beta)
        u = [to_exact(x) for x in u]
        uf = np.array([to_float(x) for x in u], dtype=np.float64)
        n = np.linalg.norm(uf)
        if n == 0:
            raise InputError("GH factor with a zero direction vector")
        return GHFactor(to_float(beta), uf / n, beta, u)

    def matrix(self) -> np.ndarray:
        return gh_matrix_float(self.beta, self.v)

    def matrix_exact(self) -> list | None:
        if self.beta_exact is None or self.u_exact is None:
            return None
        return gh_matrix_exact(self.beta_exact, self.u_exact)


@dataclass
class Transition:
    """What one layer symbol does: ``H <- A H + B``. ``A``/``B`` float64 always; exact forms when known."""
    A: np.ndarray
    B: np.ndarray
    factors: list | None = None      # gh layers: [GHFactor], applied first to last
    A_exact: list | None = None
    B_exact: list | None = None
    diag: np.ndarray | None = None   # diagonal layers
    blocks: list | None = None       # block_diagonal layers: list of square float arrays

    @staticmethod
    def from_factors(factors: Sequence[GHFactor], d: int, B=None, B_exact=None) -> "Transition":
        A = np.eye(d)
        A_ex = exact_identity(d)
        have_exact = True
        for f in factors:
            A = f.matrix() @ A
            m = f.matrix_exact()
            if m is None:
                have_exact = False
            elif have_exact:
                A_ex = exact_matmul(m, A_ex)
        if B_exact is not None:
            B_exact = [to_exact(x) for x in B_exact]
            B = np.array([to_float(x) for x in B_exact])
        if B is None:
            B = np.zeros(d)
            B_exact = [Fraction(0)] * d
        return Transition(A, np.asarray(B, dtype=np.float64), list(factors),
                          A_ex if have_exact else None, B_exact)

    @staticmethod
    def from_exact(A_exact, B_exact=None) -> "Transition":
        A_exact = [[to_exact(x) for x in r] for r in A_exact]
        d = len(A_exact)
        if B_exact is None:
            B_exact = [Fraction(0)] * d
        B_exact = [to_exact(x) for x in B_exact]
        return Transition(_floats_of(A_exact), np.array([to_float(x) for x in B_exact]), None, A_exact, B_exact)

    @property
    def is_exact(self) -> bool:
        return self.A_exact is not None and self.B_exact is not None


@dataclass
class Decoder:
    """Linear-argmax decoder: ``argmax_j (W H + c)_j`` -> label ``labels[j]``. With ``per_symbol``, ``W`` has
    shape (symbols, n_out, d) and ``c`` (symbols, n_out): the decoder also reads the layer symbol (dec(H_t, x_t))."""
    W: np.ndarray
    c: np.ndarray
    labels: list
    W_exact: list | None = None
    c_exact: list | None = None
    per_symbol: bool = False

    @staticmethod
    def exact(W_exact, c_exact, labels, per_symbol: bool = False) -> "Decoder":
        if per_symbol:
            We = [[[to_exact(x) for x in r] for r in Ws] for Ws in W_exact]
            ce = [[to_exact(x) for x in cs] for cs in c_exact]
            W = np.array([_floats_of(Ws) for Ws in We])
            c = np.array([[to_float(x) for x in cs] for cs in ce])
        else:
            We = [[to_exact(x) for x in r] for r in W_exact]
            ce = [to_exact(x) for x in c_exact]
            W = _floats_of(We)
            c = np.array([to_float(x) for x in ce])
        return Decoder(W, c, list(labels), We, ce, per_symbol)

    @staticmethod
    def nearest(refs_exact: Sequence[Sequence], labels) -> "Decoder":
        """Nearest reference state: row j = r_j, ``c_j = -|r_j|^2 / 2`` (argmax of ``r_j.H - |r_j|^2 / 2``)."""
        W = [[to_exact(x) for x in r] for r in refs_exact]
        c = []
        for r in W:
            s = Fraction(0)
            for x in r:
                s = s + x * x
            c.append(-s * Fraction(1, 2))
        return Decoder.exact(W, c, labels)

    @property
    def n_out(self) -> int:
        return len(self.labels)

    @property
    def is_exact(self) -> bool:
        return self.W_exact is not None and self.c_exact is not None


@dataclass
class Layer:
    kind: str
    width: int
    transitions: list               # one Transition per layer symbol
    H0: np.ndarray
    input_map: TableMap             # -> layer symbol in 0..len(transitions)-1
    decoder: Decoder
    H0_exact: list | None = None
    symbol_names: list | None = None
    coords: list | None = None      # name of every state coordinate
    name: str = ""

    @property
    def n_symbols(self) -> int:
        return len(self.transitions)

    @property
    def is_exact(self) -> bool:
        return (self.H0_exact is not None and all(t.is_exact for t in self.transitions)
                and self.decoder.is_exact)

    def A_stack(self) -> np.ndarray:
        return np.stack([t.A for t in self.transitions])

    def B_stack(self) -> np.ndarray:
        return np.stack([t.B for t in self.transitions])

    def max_factors(self) -> int | None:
        if self.kind != "gh":
            return None
        return max((len(t.factors or []) for t in self.transitions), default=0)

    def gh_certified_spectrum(self, tol: float = 1e-12) -> bool:
        """True iff every transition is a product of GH factors with beta in [0, 2] and unit v (so every
        eigenvalue of every factor lies in [-1, 1] and ||A||_2 <= 1). Diagonal layers count when each entry lies
        in [-1, 1] (diag(a) = prod_i G(1 - a_i, e_i)). Exact betas are checked exactly."""
        if self.kind == "diagonal":
            return all(t.diag is not None and np.all(np.abs(t.diag) <= 1 + tol) for t in self.transitions)
        if self.kind != "gh":
            return False
        for t in self.transitions:
            if t.factors is None:
                return False
            for f in t.factors:
                if f.beta_exact is not None and not isinstance(f.beta_exact, Cyc):
                    if not (0 <= f.beta_exact <= 2):
                        return False
                elif not (-tol <= f.beta <= 2 + tol):
                    return False
                if abs(np.linalg.norm(f.v) - 1) > 1e-9:
                    return False
            # the stored A must be the product of the factors
            P = np.eye(self.width)
            for f in t.factors:
                P = f.matrix() @ P
            if not np.allclose(P, t.A, atol=1e-9):
                return False
        return True

