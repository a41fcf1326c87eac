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

This module holds :class:`Model`: the stack, its structure and its validation. The pieces of a layer are in
:mod:`lrnnkit.model.layer`, the file format in :mod:`lrnnkit.model.io`, the float/exact consistency check in
:mod:`lrnnkit.model.consistency` and the exact arithmetic in :mod:`lrnnkit.model.linalg`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..automata.words import split_word
from ..errors import InputError
from .consistency import canonicalize_floats
from .io import document_fields, read_document, save_model, to_document
from .layer import LAYER_KINDS, TableMap

__all__ = ["Model"]


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

    # ------------------------------------------------------------------ serialization (lrnnkit.model.io)
    def to_json(self, arrays: dict | None = None) -> dict:
        """The JSON document. If ``arrays`` is a dict, float arrays are put there (for safetensors) and referenced
        by name; otherwise they are inline."""
        return to_document(self, arrays)

    def save(self, path: str | os.PathLike, safetensors: bool | None = None) -> None:
        """Write the model atomically (temporary file, then rename). Large float arrays go to
        ``<path stem>.safetensors`` beside the JSON when ``safetensors`` is true (default: when the model has more
        than :data:`~lrnnkit.model.io.INLINE_LIMIT` float entries)."""
        save_model(self, path, safetensors)

    @staticmethod
    def load(path: str | os.PathLike) -> "Model":
        path = os.fspath(path)
        doc, arrays = read_document(path)
        return Model.from_json(doc, path, arrays)

    @staticmethod
    def from_json(doc: Any, where: str = "model", arrays: dict | None = None) -> "Model":
        """Build a model from its JSON document. Every defect is an InputError naming ``where`` (the file)."""
        try:
            return Model(**document_fields(doc, where, arrays))
        except InputError as exc:
            msg = str(exc)
            raise InputError(msg if msg.startswith(where) else f"{where}: {msg}") from None
        except RecursionError:
            raise InputError(f"{where}: the document is nested too deeply") from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            raise InputError(f"{where}: malformed model ({type(exc).__name__}: {exc})") from None


def _check_exact_shape(x, shape: tuple, where: str) -> None:
    """InputError unless the nested lists ``x`` are rectangular with leading dimensions ``shape``."""
    def shp(v):
        if isinstance(v, (list, tuple)):
            inner = {shp(e) for e in v}
            if len(inner) > 1:
                raise InputError(f"{where}: ragged exact array")
            return (len(v),) + (inner.pop() if inner else ())
        return ()
    if x is None or shp(x)[:len(shape)] != tuple(shape):
        raise InputError(f"{where}: exact array of shape {None if x is None else shp(x)}, expected {tuple(shape)}")

