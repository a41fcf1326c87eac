"""The model format: the one intermediate representation every part of lrnnkit exchanges.

A :class:`Model` is a stack of LRNN layers (paper 000, eq. 1)::

    H^l_t = A^l(s^l_t) H^l_{t-1} + B^l(s^l_t),        y^l_t = dec^l(H^l_t, s^l_t)

where ``s^l_t`` is the layer's *symbol* at step t, computed by the layer's input map (a :class:`TableMap`) from the
model input ``x_t`` and the outputs ``y^j`` of the layers below it, each possibly read with a lag (a token shift /
short causal window, as the short convolutions of DeltaNet and Mamba). The model's output at step t is its
``readout`` (another :class:`TableMap`) of the layer outputs, naming a label of ``output_labels``.

States are column vectors of width ``d`` (matrices act on the left: the matrix of the word ``a_1 .. a_t`` is
``A(a_t) .. A(a_1)``). Every transition keeps float64 arrays and, where the math is exact, exact values
(int / Fraction / :class:`lrnnkit.exact.Cyc`) beside them.

Layer kinds and what a transition stores:

* ``gh``: a list of generalized Householder factors ``G(beta, v) = I - beta v v^T`` (``||v|| = 1``,
  ``beta in [0, 2]``); the token's matrix is ``A = G_{n_h} ... G_1`` (later factor on the left, DeltaProduct's
  order). Exactly, a factor is stored as ``(beta, u)`` with ``u`` any nonzero multiple of ``v``, since
  ``I - beta u u^T / (u^T u)`` is exact in the field of ``u`` even where ``v = u / ||u||`` is not.
* ``diagonal``: ``A = diag(a)``; ``block_diagonal``: ``A = blockdiag(blocks)``; ``bilinear`` and ``dense``: ``A``.

Decoders are linear-argmax: ``y = argmax_j (W H + c)_j`` (per symbol when ``per_symbol``), which covers nearest
reference state (``W`` rows = reference states, ``c = -|r|^2/2``), sign tests and one-hot readouts. A certified
model has a strict maximum at every reachable state.

File format: one JSON document, ``{"format": "lrnnkit.model", "version": 1, ...}``; float arrays inline, or in a
safetensors file beside it (``"arrays": "NAME.safetensors"``) when large. No pickle: loading never runs code.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from .errors import InputError
from .exact import Cyc, exact_from_json, exact_to_json, to_exact, to_float
from .automata.words import split_word
from .exact import sign
from .fileio import atomic_write_bytes, read_safetensors
from . import limits
from .limits import read_bounded

__all__ = ["Read", "TableMap", "GHFactor", "Transition", "Decoder", "Layer", "Model", "SCHEMA", "VERSION",
           "consistency_problems", "canonicalize_floats", "exact_matmul", "exact_matvec", "exact_identity", "gh_matrix_exact", "gh_matrix_float"]

SCHEMA = "lrnnkit.model"
VERSION = 1
LAYER_KINDS = ("gh", "diagonal", "block_diagonal", "bilinear", "dense")
INLINE_LIMIT = 1_000_000  # float entries kept inline in the JSON; larger models put arrays in safetensors


# --------------------------------------------------------------------------- exact linear algebra helpers
def exact_identity(d: int) -> list:
    return [[Fraction(int(i == j)) for j in range(d)] for i in range(d)]


def exact_matmul(A: list, B: list) -> list:
    n, m, p = len(A), len(B), len(B[0]) if B else 0
    out = []
    for i in range(n):
        row = []
        Ai = A[i]
        for j in range(p):
            acc = Fraction(0)
            for k in range(m):
                a = Ai[k]
                if a != 0:
                    b = B[k][j]
                    if b != 0:
                        acc = acc + a * b
            row.append(acc)
        out.append(row)
    return out


def exact_matvec(A: list, x: Sequence) -> list:
    out = []
    for row in A:
        acc = Fraction(0)
        for a, b in zip(row, x):
            if a != 0 and b != 0:
                acc = acc + a * b
        out.append(acc)
    return out


def _gh_scale(beta, u: Sequence):
    """``beta / (u^T u)`` exactly: the coefficient of ``u u^T`` in a GH factor (u need not be a unit vector)."""
    nrm = Fraction(0)
    for x in u:
        nrm = nrm + x * x
    if isinstance(nrm, Cyc):
        raise InputError("GH factor direction with an irrational squared norm: give u with a rational u^T u")
    if nrm == 0:
        raise InputError("GH factor with a zero direction vector")
    return beta * Fraction(1) / nrm


def gh_matrix_exact(beta, u: Sequence) -> list:
    """``I - beta u u^T / (u^T u)`` exactly (u need not be a unit vector)."""
    d = len(u)
    s = _gh_scale(beta, u)
    return [[Fraction(int(i == j)) - s * u[i] * u[j] for j in range(d)] for i in range(d)]


def gh_matrix_float(beta: float, v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return np.eye(len(v)) - beta * np.outer(v, v)


def _float_array(x, name: str, shape: tuple | None = None) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: not a numeric array") from None
    if shape is not None and arr.shape != shape:
        raise InputError(f"{name}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: contains NaN or infinity")
    return arr


def _exact_vec(x, name: str, d: int | None = None) -> list | None:
    if x is None:
        return None
    if not isinstance(x, (list, tuple)):
        raise InputError(f"{name}: exact vector must be a list")
    out = [to_exact(v) for v in x]
    if d is not None and len(out) != d:
        raise InputError(f"{name}: exact vector of length {len(out)}, expected {d}")
    return out


def _exact_mat(x, name: str, shape: tuple | None = None) -> list | None:
    if x is None:
        return None
    if not isinstance(x, (list, tuple)) or not all(isinstance(r, (list, tuple)) for r in x):
        raise InputError(f"{name}: exact matrix must be a list of rows")
    out = [[to_exact(v) for v in r] for r in x]
    if shape is not None and (len(out) != shape[0] or any(len(r) != shape[1] for r in out)):
        raise InputError(f"{name}: exact matrix is not of shape {shape}")
    return out


def _floats_of(exact_rows) -> np.ndarray:
    return np.array([[to_float(v) for v in r] for r in exact_rows], dtype=np.float64)


# --------------------------------------------------------------------------- table maps
@dataclass(frozen=True)
class Read:
    """One source a table map reads: ``"input"`` (the model token) or a layer index, at a lag (0 = this step).
    Before the sequence start (t - lag < 1) a lagged read gives the pad value ``size - 1`` (BOS)."""
    source: Any  # "input" | int
    lag: int = 0


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
        _need(d, ("reads", "sizes", "table", "n_out"), where)
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
        """Nearest reference state: row j = r_j, c_j = -|r_j|^2 / 2 (argmax of r_j.H - |r_j|^2/2)."""
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


@dataclass
class Model:
    """A compiled LRNN: input alphabet, layers, readout. See the module docstring for the semantics."""
    alphabet: list
    layers: list
    readout: TableMap
    output_labels: list
    name: str = ""
    provenance: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)

    def __post_init__(self):
        self.validate()
        # the floats every backend runs are the rounding of the exact weights where these exist; what the given
        # floats got wrong is kept for the certifier (which then refuses: the file contradicts itself)
        self.inconsistencies = canonicalize_floats(self)

    # ------------------------------------------------------------------ structure
    @property
    def widths(self) -> list:
        return [L.width for L in self.layers]

    @property
    def is_exact(self) -> bool:
        return all(L.is_exact for L in self.layers)

    def source_size(self, src) -> int:
        if src == "input":
            return len(self.alphabet)
        return self.layers[src].decoder.n_out

    def encode(self, word) -> list:
        """Symbols (``"a b c"``, ``"101"`` over one-character symbols, or a sequence) to letter indices."""
        word = split_word(word, self.alphabet)
        idx = {s: i for i, s in enumerate(self.alphabet)}
        out = []
        for s in word:
            if s not in idx:
                raise InputError(f"unknown symbol {s!r}; the model's alphabet is {self.alphabet[:20]}")
            out.append(idx[s])
        return out

    def validate(self) -> None:
        if not self.alphabet:
            raise InputError("model: empty alphabet")
        if len(set(self.alphabet)) != len(self.alphabet):
            raise InputError("model: duplicate alphabet symbols")
        if not self.layers:
            raise InputError("model: no layers")

        def check_map(tm: TableMap, below: int, where: str):
            for r, s in zip(tm.reads, tm.sizes):
                if r.source != "input" and not (isinstance(r.source, int) and 0 <= r.source < below):
                    raise InputError(f"{where}: reads {r.source!r}, which is not the input or a layer below")
                want = self.source_size(r.source) + (1 if r.lag > 0 else 0)
                if s != want:
                    raise InputError(f"{where}: read {r.source!r} (lag {r.lag}) has size {s}, expected {want}")

        for i, L in enumerate(self.layers):
            w = f"layer {i}"
            if L.kind not in LAYER_KINDS:
                raise InputError(f"{w}: unknown kind {L.kind!r} (one of {', '.join(LAYER_KINDS)})")
            d = L.width
            if d < 1:
                raise InputError(f"{w}: width must be >= 1")
            if not L.transitions:
                raise InputError(f"{w}: no transitions")
            for j, t in enumerate(L.transitions):
                if t.A.shape != (d, d) or t.B.shape != (d,):
                    raise InputError(f"{w} symbol {j}: A {t.A.shape} / B {t.B.shape} do not match width {d}")
                if L.kind == "gh" and t.factors is None:
                    raise InputError(f"{w} symbol {j}: gh layer transition without factors")
            if L.H0.shape != (d,):
                raise InputError(f"{w}: H0 has shape {L.H0.shape}, expected ({d},)")
            if L.input_map.n_out != L.n_symbols:
                raise InputError(f"{w}: input map has {L.input_map.n_out} outputs for {L.n_symbols} symbols")
            check_map(L.input_map, i, f"{w} input map")
            D = L.decoder
            exp_shape = (L.n_symbols, D.n_out, d) if D.per_symbol else (D.n_out, d)
            if D.W.shape != exp_shape:
                raise InputError(f"{w}: decoder W has shape {D.W.shape}, expected {exp_shape}")
            if D.c.shape != exp_shape[:-1]:
                raise InputError(f"{w}: decoder c has shape {D.c.shape}, expected {exp_shape[:-1]}")
            if D.n_out < 1:
                raise InputError(f"{w}: decoder without labels")
            if D.W_exact is not None or D.c_exact is not None:
                _check_exact_shape(D.W_exact, exp_shape, f"{w} decoder W_exact")
                _check_exact_shape(D.c_exact, exp_shape[:-1], f"{w} decoder c_exact")
            for j, t in enumerate(L.transitions):
                if t.diag is not None and np.shape(t.diag) != (d,):
                    raise InputError(f"{w} symbol {j}: diag has shape {np.shape(t.diag)}, expected ({d},)")
        check_map(self.readout, len(self.layers), "readout")
        if self.readout.n_out != len(self.output_labels):
            raise InputError(f"readout has {self.readout.n_out} outputs for {len(self.output_labels)} labels")

    # ------------------------------------------------------------------ serialization
    def to_json(self, arrays: dict | None = None) -> dict:
        """The JSON document. If ``arrays`` is a dict, float arrays are put there (for safetensors) and referenced
        by name; otherwise they are inline."""
        def arr(name: str, a: np.ndarray):
            a = np.asarray(a, dtype=np.float64)
            if arrays is not None:
                arrays[name] = a
                return {"tensor": name}
            return a.tolist()

        def ex_list(x):
            return None if x is None else [exact_to_json(v) for v in x]

        def ex_mat(x):
            return None if x is None else [[exact_to_json(v) for v in r] for r in x]

        layers = []
        for i, L in enumerate(self.layers):
            trans = []
            for j, t in enumerate(L.transitions):
                p = f"l{i}.s{j}."
                td: dict = {"A": arr(p + "A", t.A), "B": arr(p + "B", t.B)}
                if t.factors is not None:
                    td["factors"] = [{"beta": f.beta, "v": arr(p + f"f{k}.v", f.v),
                                      "beta_exact": None if f.beta_exact is None else exact_to_json(f.beta_exact),
                                      "u_exact": ex_list(f.u_exact)} for k, f in enumerate(t.factors)]
                if t.A_exact is not None:
                    td["A_exact"] = ex_mat(t.A_exact)
                if t.B_exact is not None:
                    td["B_exact"] = ex_list(t.B_exact)
                if t.diag is not None:
                    td["diag"] = arr(p + "diag", t.diag)
                if t.blocks is not None:
                    td["blocks"] = [arr(p + f"b{k}", b) for k, b in enumerate(t.blocks)]
                trans.append(td)
            D = L.decoder
            dec = {"kind": "argmax", "W": arr(f"l{i}.dec.W", D.W), "c": arr(f"l{i}.dec.c", D.c),
                   "labels": list(D.labels), "per_symbol": D.per_symbol}
            if D.W_exact is not None:
                dec["W_exact"] = ([ex_mat(m) for m in D.W_exact] if D.per_symbol else ex_mat(D.W_exact))
                dec["c_exact"] = ([ex_list(v) for v in D.c_exact] if D.per_symbol else ex_list(D.c_exact))
            layers.append({
                "name": L.name, "kind": L.kind, "width": L.width, "H0": arr(f"l{i}.H0", L.H0),
                "H0_exact": ex_list(L.H0_exact), "input_map": L.input_map.to_json(), "decoder": dec,
                "symbol_names": L.symbol_names, "coords": L.coords, "transitions": trans,
            })
        return {"format": SCHEMA, "version": VERSION, "name": self.name, "alphabet": list(self.alphabet),
                "layers": layers, "readout": self.readout.to_json(), "output_labels": list(self.output_labels),
                "provenance": self.provenance, "notes": self.notes}

    def save(self, path: str | os.PathLike, safetensors: bool | None = None) -> None:
        """Write the model atomically (temporary file, then rename). Large float arrays go to
        ``<path stem>.safetensors`` beside the JSON when ``safetensors`` is true (default: when the model has more
        than INLINE_LIMIT float entries)."""
        path = os.fspath(path)
        if safetensors is None:
            n = sum(t.A.size for L in self.layers for t in L.transitions)
            safetensors = n > INLINE_LIMIT
        arrays: dict | None = {} if safetensors else None
        doc = self.to_json(arrays)
        d = os.path.dirname(os.path.abspath(path))
        if arrays is not None:
            from safetensors.numpy import save as st_save
            st_name = os.path.splitext(os.path.basename(path))[0] + ".safetensors"
            doc["arrays"] = st_name
            _atomic_write(os.path.join(d, st_name), st_save({k: np.ascontiguousarray(v) for k, v in arrays.items()}))
        _atomic_write(path, (json.dumps(doc, indent=1) + "\n").encode())

    @staticmethod
    def load(path: str | os.PathLike) -> "Model":
        path = os.fspath(path)
        raw = read_bounded(path, limits.MAX_MODEL_BYTES, "model", "MAX_MODEL_BYTES")
        if not raw.strip():
            raise InputError(f"model {path!r} is empty (expected a JSON object)")
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"model {path!r} is not valid JSON: {exc}") from None
        except RecursionError:
            raise InputError(f"model {path!r}: the JSON is nested too deeply") from None
        except ValueError as exc:   # e.g. an integer literal past Python's 4300-digit conversion limit
            raise InputError(f"model {path!r}: {exc}") from None
        arrays = None
        if isinstance(doc, dict) and doc.get("arrays"):
            st = doc["arrays"]
            if not isinstance(st, str) or os.sep in st or st.startswith("."):
                raise InputError(f"model {path!r}: bad arrays file name {st!r}")
            arrays = read_safetensors(os.path.join(os.path.dirname(os.path.abspath(path)), st),
                                      _tensor_names(doc), limits.MAX_ARRAYS_BYTES, f"arrays file of model {path!r}")
        return Model.from_json(doc, path, arrays)

    @staticmethod
    def from_json(doc: Any, where: str = "model", arrays: dict | None = None) -> "Model":
        """Build a model from its JSON document. Every defect is an InputError naming ``where`` (the file)."""
        try:
            return Model._from_json(doc, where, arrays)
        except InputError as exc:
            msg = str(exc)
            raise InputError(msg if msg.startswith(where) else f"{where}: {msg}") from None
        except RecursionError:
            raise InputError(f"{where}: the document is nested too deeply") from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            raise InputError(f"{where}: malformed model ({type(exc).__name__}: {exc})") from None

    @staticmethod
    def _from_json(doc: Any, where: str, arrays: dict | None) -> "Model":
        if not isinstance(doc, dict):
            raise InputError(f"{where}: top level must be a JSON object")
        if doc.get("format") != SCHEMA:
            raise InputError(f"{where}: not an lrnnkit model (format {doc.get('format')!r}, expected {SCHEMA!r})")
        if doc.get("version") != VERSION:
            raise InputError(f"{where}: unsupported model version {doc.get('version')!r} (this lrnnkit reads {VERSION})")
        _need(doc, ("alphabet", "layers", "readout", "output_labels"), where)

        def arr(x, name, shape=None):
            if isinstance(x, dict) and "tensor" in x:
                if arrays is None or x["tensor"] not in arrays:
                    raise InputError(f"{where}: {name}: tensor {x.get('tensor')!r} missing from the arrays file")
                x = arrays[x["tensor"]]
            return _float_array(x, f"{where}: {name}", shape)

        layers = []
        if not isinstance(doc["layers"], list):
            raise InputError(f"{where}: layers must be a list")
        for i, ld in enumerate(doc["layers"]):
            w = f"{where}: layer {i}"
            if not isinstance(ld, dict):
                raise InputError(f"{w}: must be an object")
            _need(ld, ("kind", "width", "H0", "input_map", "decoder", "transitions"), w)
            d = ld["width"]
            if not isinstance(d, int) or isinstance(d, bool) or d < 1:
                raise InputError(f"{w}: width must be a positive integer, got {d!r}")
            trans = []
            if not isinstance(ld["transitions"], list):
                raise InputError(f"{w}: transitions must be a list")
            for j, td in enumerate(ld["transitions"]):
                tw = f"layer {i} symbol {j}"
                if not isinstance(td, dict):
                    raise InputError(f"{where}: {tw}: must be an object")
                _need(td, ("A", "B"), f"{where}: {tw}")
                factors = None
                if td.get("factors") is not None:
                    factors = []
                    if not isinstance(td["factors"], list):
                        raise InputError(f"{where}: {tw}: factors must be a list of objects, got "
                                         f"{_short(td['factors'])}")
                    for k, fd in enumerate(td["factors"]):
                        _need(fd, ("beta", "v"), f"{where}: {tw} factor {k}")
                        be = fd.get("beta_exact")
                        if not isinstance(fd["beta"], (int, float)) or isinstance(fd["beta"], bool):
                            raise InputError(f"{where}: {tw} factor {k}: beta must be a number, got "
                                             f"{_short(fd['beta'])}")
                        factors.append(GHFactor(float(fd["beta"]), arr(fd["v"], f"{tw} factor {k} v", (d,)),
                                                None if be is None else exact_from_json(be),
                                                _exact_vec(fd.get("u_exact"), f"{tw} factor {k} u_exact", d)))
                blocks = None
                if td.get("blocks") is not None:
                    blocks = [arr(b, f"{tw} block {k}") for k, b in enumerate(td["blocks"])]
                trans.append(Transition(
                    arr(td["A"], f"{tw} A", (d, d)), arr(td["B"], f"{tw} B", (d,)), factors,
                    _exact_mat(td.get("A_exact"), f"{tw} A_exact", (d, d)),
                    _exact_vec(td.get("B_exact"), f"{tw} B_exact", d),
                    None if td.get("diag") is None else arr(td["diag"], f"{tw} diag", (d,)), blocks))
            dd = ld["decoder"]
            _need(dd, ("W", "c", "labels"), f"{w} decoder")
            per = bool(dd.get("per_symbol", False))
            W = arr(dd["W"], f"layer {i} decoder W")
            c = arr(dd["c"], f"layer {i} decoder c")
            We = ce = None
            if dd.get("W_exact") is not None:
                if per:
                    We = [_exact_mat(m, f"{w} decoder W_exact") for m in dd["W_exact"]]
                    ce = [_exact_vec(v, f"{w} decoder c_exact") for v in dd["c_exact"]]
                else:
                    We = _exact_mat(dd["W_exact"], f"{w} decoder W_exact")
                    ce = _exact_vec(dd.get("c_exact"), f"{w} decoder c_exact")
            dec = Decoder(W, c, [str(x) for x in dd["labels"]], We, ce, per)
            layers.append(Layer(ld["kind"], d, trans, arr(ld["H0"], f"layer {i} H0", (d,)),
                                TableMap.from_json(ld["input_map"], f"{w} input map"), dec,
                                _exact_vec(ld.get("H0_exact"), f"{w} H0_exact", d),
                                ld.get("symbol_names"), ld.get("coords"), ld.get("name", "")))
        return Model([str(s) for s in doc["alphabet"]], layers,
                     TableMap.from_json(doc["readout"], f"{where}: readout"),
                     [str(s) for s in doc["output_labels"]], doc.get("name", ""),
                     doc.get("provenance") or {}, doc.get("notes") or {})


# --------------------------------------------------------------------------- float weights vs exact weights
CONSISTENCY_TOL = 1e-9
"""Relative tolerance for "the stored float equals the rounding of its exact form": compiled files store products of
GH factors computed in float64, a few ulps (~1e-15) off the correctly rounded exact product; a tampered or corrupted
weight is off by far more. The floats are then replaced by the exact rounding, so the tolerance only decides what is
reported, never what runs."""
MAX_PROBLEMS = 8  # problems listed per model (the count of the rest is given)


def _check_exact_shape(x, shape: tuple, where: str) -> None:
    def shp(v):
        if isinstance(v, (list, tuple)):
            inner = {shp(e) for e in v}
            if len(inner) > 1:
                raise InputError(f"{where}: ragged exact array")
            return (len(v),) + (inner.pop() if inner else ())
        return ()
    if x is None or shp(x)[:len(shape)] != tuple(shape):
        raise InputError(f"{where}: exact array of shape {None if x is None else shp(x)}, expected {tuple(shape)}")


class _Rounder:
    """float64 rounding of exact values (memoized; values repeat a lot). Out of range or non-real: InputError."""

    def __init__(self):
        self.cache: dict = {}

    def __call__(self, x) -> float:
        try:
            return self.cache[x]
        except KeyError:
            pass
        try:
            v = to_float(x)
        except OverflowError:
            raise InputError(f"exact value {_short(exact_to_json(x))} lies outside the float64 range "
                             f"(|x| < {np.finfo(np.float64).max:.4g})") from None
        except ValueError as exc:
            raise InputError(f"exact value {_short(exact_to_json(x))}: {exc}") from None
        if not np.isfinite(v):
            raise InputError(f"exact value {_short(exact_to_json(x))} lies outside the float64 range")
        self.cache[x] = v
        return v

    def array(self, x, name: str = "") -> np.ndarray:
        try:
            if x and isinstance(x[0], (list, tuple)):
                return np.array([self.array(r) for r in x], dtype=np.float64)
            return np.array([self(v) for v in x], dtype=np.float64)
        except InputError as exc:
            if not name:
                raise
            raise InputError(f"{name}: {exc}") from None


def _short(x) -> str:
    """A value for a message: short JSON, or its magnitude when it has many digits (1e400: "~1.000e+400")."""
    t = json.dumps(x)
    if len(t) <= 60:
        return t
    if isinstance(x, str):
        try:
            import mpmath
            f = Fraction(x)
            return "~" + mpmath.nstr(mpmath.mpf(f.numerator) / f.denominator, 4)
        except (ValueError, ZeroDivisionError):
            pass
    return t[:57] + "..."


def _unit_key(u: Sequence) -> np.ndarray:
    """u / ||u|| rounded to float64 (evaluated with 40 digits: u^T u is rational, the square root is not)."""
    import mpmath
    with mpmath.workdps(40):
        vals = [x.to_mpc(40).real if isinstance(x, Cyc) else mpmath.mpf(x.numerator) / x.denominator for x in u]
        n = mpmath.sqrt(mpmath.fsum(v * v for v in vals))
        if n == 0:
            raise InputError("GH factor with a zero key")
        return np.array([float(v / n) for v in vals], dtype=np.float64)


def _exact_in(x, lo, hi) -> bool:
    return sign(x - lo) >= 0 and sign(hi - x) >= 0


def _float_problems(model: "Model", fix: bool) -> list:
    """Compare every float array with the rounding of its exact form; with ``fix``, replace the floats by it.
    Also checks what can be checked on the floats alone: betas in [0, 2] (exactly where exact), unit keys, the
    float product of GH factors against the letter matrix, diagonal layers diagonal."""
    R = _Rounder()
    keys: dict = {}   # unit keys by exact key (keys repeat: S6 has 4320 factors over 15 keys)
    probs: list = []

    def cmp(name: str, given, canon: np.ndarray):
        given = np.asarray(given, dtype=np.float64)
        if given.shape != canon.shape:
            probs.append(f"{name}: float array of shape {given.shape}, its exact form has shape {canon.shape}")
            return
        bad = np.abs(given - canon) > CONSISTENCY_TOL * (1 + np.abs(canon))
        if bad.any():
            idx = tuple(int(k) for k in np.argwhere(bad)[0])
            probs.append(f"{name}: the float weights are not the rounding of the exact ones ({int(bad.sum())} "
                         f"entr{'y' if bad.sum() == 1 else 'ies'}; at {list(idx)}: {float(given[idx])!r}, exact "
                         f"{float(canon[idx])!r})")

    def sync(obj, attr: str, exact, label: str) -> None:
        """Compare ``obj.attr`` with the float64 rounding of ``exact`` (when given); with ``fix``, replace it."""
        if exact is None:
            return
        canon = R.array(exact, f"{label}_exact")
        cmp(label, getattr(obj, attr), canon)
        if fix:
            setattr(obj, attr, canon)

    for i, L in enumerate(model.layers):
        w = f"layer {i}"
        d = L.width
        for j, t in enumerate(L.transitions):
            tw = f"{w} symbol {j}"
            sync(t, "A", t.A_exact, f"{tw} A")
            sync(t, "B", t.B_exact, f"{tw} B")
            for k, f in enumerate(t.factors or []):
                fw = f"{tw} GH factor {k}"
                if f.beta_exact is not None:
                    if not _exact_in(f.beta_exact, 0, 2):
                        probs.append(f"{fw}: beta = {_short(exact_to_json(f.beta_exact))} is outside [0, 2]")
                    cb = R(f.beta_exact)
                    if abs(f.beta - cb) > CONSISTENCY_TOL * (1 + abs(cb)):
                        probs.append(f"{fw}: float beta {f.beta!r} is not the rounding of the exact {cb!r}")
                    if fix:
                        f.beta = cb
                elif not (0 <= f.beta <= 2):
                    probs.append(f"{fw}: beta = {f.beta!r} is outside [0, 2]")
                if f.u_exact is not None:
                    try:
                        ukey = tuple(f.u_exact)
                        cv = keys.get(ukey)
                        if cv is None:
                            cv = keys[ukey] = _unit_key(f.u_exact)
                    except InputError as exc:
                        probs.append(f"{fw}: {exc}")
                    else:
                        v = np.asarray(f.v, dtype=np.float64)
                        if v.shape != cv.shape or min(np.abs(v - cv).max(), np.abs(v + cv).max()) > CONSISTENCY_TOL:
                            probs.append(f"{fw}: float key v is not u_exact / ||u_exact||")
                        if fix:
                            f.v = cv
                if abs(float(np.linalg.norm(f.v)) - 1) > CONSISTENCY_TOL:
                    probs.append(f"{fw}: the key v is not a unit vector (||v|| = {float(np.linalg.norm(f.v))!r})")
            if t.factors is not None:
                P = np.eye(d)
                for f in t.factors:
                    P = gh_matrix_float(f.beta, f.v) @ P
                if np.abs(P - t.A).max(initial=0) > 1e-9 * max(1, len(t.factors)):
                    probs.append(f"{tw}: the product of its GH factors is not its matrix A")
            if L.kind == "diagonal":
                if t.A_exact is not None and any(not is_zero_exact(t.A_exact[a][b])
                                                 for a in range(d) for b in range(d) if a != b):
                    probs.append(f"{tw}: a diagonal layer with an off-diagonal exact entry in A_exact")
                if np.any(t.A[~np.eye(d, dtype=bool)] != 0):
                    probs.append(f"{tw}: a diagonal layer with an off-diagonal float entry in A")
                if t.diag is not None:
                    cmp(f"{tw} diag", t.diag, np.diag(t.A).copy())
                    if fix:
                        t.diag = np.diag(t.A).copy()
            if t.blocks is not None:
                sizes = [np.shape(b) for b in t.blocks]
                if any(len(sz) != 2 or sz[0] != sz[1] for sz in sizes) or sum(sz[0] for sz in sizes) != d:
                    probs.append(f"{tw}: blocks of shapes {sizes} do not tile a width-{d} matrix")
                else:
                    M = np.zeros((d, d))
                    o = 0
                    for b in t.blocks:
                        n = np.shape(b)[0]
                        M[o:o + n, o:o + n] = b
                        o += n
                    cmp(f"{tw} blocks", M, t.A)
        sync(L, "H0", L.H0_exact, f"{w} H0")
        sync(L.decoder, "W", L.decoder.W_exact, f"{w} decoder W")
        sync(L.decoder, "c", L.decoder.c_exact, f"{w} decoder c")
    return probs


def is_zero_exact(x) -> bool:
    return not isinstance(x, Cyc) and x == 0


def canonicalize_floats(model: "Model") -> list:
    """Make the float64 arrays of ``model`` the rounding of its exact weights, where these exist (A, B, H0, decoder
    W and c, GH betas and unit keys u / ||u||, diagonals), so that every backend executes the same float weights and
    a certificate of the exact weights covers them. Returns what the given floats got wrong (a list of one-line
    problems, empty for a consistent model). Called by ``Model.__post_init__``; the certifier refuses a model with
    problems (see :func:`consistency_problems`)."""
    return _float_problems(model, fix=True)


def consistency_problems(model: "Model") -> list:
    """Everything that keeps a certificate of the exact weights from covering what the backends execute: the
    problems found on construction / loading (``model.inconsistencies``), the floats changed since, and, exactly,
    every GH letter matrix A_exact against the product of its exact factors (000, eq. 1 and Proposition 1: a GH
    layer runs ``A = G_n ... G_1``, each ``G = I - beta u u^T / (u^T u)``). Empty iff consistent."""
    probs = list(getattr(model, "inconsistencies", []) or [])
    for p in _float_problems(model, fix=False):
        if p not in probs:
            probs.append(p)
    for i, L in enumerate(model.layers):
        if L.kind not in LAYER_KINDS:
            probs.append(f"layer {i}: kind {L.kind!r} is not one the certifier knows ({', '.join(LAYER_KINDS)})")
            continue
        for j, t in enumerate(L.transitions):
            if t.factors is None or t.A_exact is None:
                continue
            if L.kind == "gh" and any(f.beta_exact is None or f.u_exact is None for f in t.factors):
                probs.append(f"layer {i} symbol {j}: GH factors without exact forms beside an exact A")
                continue
            if any(f.beta_exact is None or f.u_exact is None for f in t.factors):
                continue
            try:
                M = _exact_factor_product(t.factors, L.width)
            except InputError as exc:
                probs.append(f"layer {i} symbol {j}: {exc}")
                continue
            if M != [list(r) for r in t.A_exact]:
                probs.append(f"layer {i} symbol {j}: A_exact is not the product of its exact GH factors")
    return probs


def _exact_factor_product(factors, d: int) -> list:
    """G_n ... G_1 exactly, each factor applied in O(d^2): G M = M - (beta / u^T u) u (u^T M)."""
    M = exact_identity(d)
    for f in factors:
        u = list(f.u_exact)
        s = _gh_scale(f.beta_exact, u)
        wrow = []
        for col in range(d):
            acc = Fraction(0)
            for r in range(d):
                if u[r] != 0 and M[r][col] != 0:
                    acc = acc + u[r] * M[r][col]
            wrow.append(acc)
        for r in range(d):
            if u[r] == 0:
                continue
            su = s * u[r]
            for col in range(d):
                if wrow[col] != 0:
                    M[r][col] = M[r][col] - su * wrow[col]
    return M


def _need(d: Any, keys: Sequence[str], where: str) -> None:
    if not isinstance(d, dict):
        raise InputError(f"{where}: expected a JSON object")
    missing = [k for k in keys if k not in d]
    if missing:
        raise InputError(f"{where}: missing field(s) {', '.join(missing)}")


def _tensor_names(doc: Any) -> set:
    """The names of the tensors a model document references (``{"tensor": NAME}`` anywhere in it): the only ones
    read from its safetensors file."""
    names, stack = set(), [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if isinstance(x.get("tensor"), str):
                names.add(x["tensor"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return names


def _atomic_write(path: str, data: bytes) -> None:
    # kept for old imports; the logic lives in lrnnkit.fileio
    atomic_write_bytes(path, data)
