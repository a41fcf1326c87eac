"""Reference executors for the model format: batched float64 (numpy) and exact (Fraction / Cyc).

Semantics (lrnnkit.model): layers run bottom-up. Step ``t`` (0-based here; the papers' ``x_{t+1}``) of layer ``l``:
its symbol ``s = input_map(values read)``, where a read of source ``src`` at lag ``k`` is the source's value at step
``t - k`` (the model input, or the output of a lower layer) or the BOS pad ``size - 1`` when ``t - k < 0``; then
``H_t = A(s) H_{t-1} + B(s)`` and ``y_t = argmax(W H_t + c)`` (``W[s]``, ``c[s]`` when per-symbol). A layer only
reads layers below it, so the whole sequence can run through one layer before the next (what the GPU layers do).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from .errors import InputError
from .automata.words import index_words
from .exact import Cyc, common_order, sign
from .model import Layer, Model, TableMap

__all__ = ["ExecResult", "run_float", "run_exact", "read_values", "ExactLayer", "StateGrowthError"]

MAX_BITS = 512  # exact state entries past this size mean the reachable set is (almost surely) infinite


class StateGrowthError(ArithmeticError):
    """An exact state entry outgrew MAX_BITS bits: the reachable state set is not finite in practice (e.g. an
    eigenvalue of modulus in (0, 1) applied repeatedly: 2^-k)."""


@dataclass
class ExecResult:
    outputs: np.ndarray          # (B, T) indices into model.output_labels
    layer_outputs: list          # per layer (B, T) decoder outputs
    layer_symbols: list          # per layer (B, T) symbols
    states: list | None          # per layer (B, T, d) float64 states, if kept
    model: Model

    def labels(self) -> np.ndarray:
        return np.asarray(self.model.output_labels, dtype=object)[self.outputs]


def read_values(tm: TableMap, sources: dict, T: int) -> np.ndarray:
    """Apply a table map over whole sequences. ``sources[src]`` is a (B, T) int array for "input" / layer index."""
    vals = []
    for r, size in zip(tm.reads, tm.sizes):
        vals.append(r.at_lag(sources[r.source], size))
    return tm.lookup_batch(vals)


def run_float(model: Model, words, keep_states: bool = False) -> ExecResult:
    """Run ``words`` (int array (B, T), or one word as a 1-D sequence) through the model in float64."""
    words = index_words(words, len(model.alphabet), "run_float: words")
    B, T = words.shape
    sources: dict = {"input": words}
    outs, syms, states = [], [], []
    for i, L in enumerate(model.layers):
        s = read_values(L.input_map, sources, T)
        A, Bv = L.A_stack(), L.B_stack()
        H = np.broadcast_to(L.H0, (B, L.width)).copy()
        Hs = np.empty((B, T, L.width))
        for t in range(T):
            st = s[:, t]
            H = np.einsum("bij,bj->bi", A[st], H) + Bv[st]
            Hs[:, t] = H
        D = L.decoder
        if D.per_symbol:
            scores = np.einsum("btnd,btd->btn", D.W[s], Hs) + D.c[s]
        else:
            scores = Hs @ D.W.T + D.c
        y = np.argmax(scores, axis=-1)
        sources[i] = y
        outs.append(y)
        syms.append(s)
        if keep_states:
            states.append(Hs)
    final = read_values(model.readout, sources, T)
    return ExecResult(final, outs, syms, states if keep_states else None, model)


# --------------------------------------------------------------------------- exact execution
def _lift(x, N: int):
    return x.lifted(N) if isinstance(x, Cyc) and x.N != N else x


def _all_exact_values(model: Model):
    for L in model.layers:
        for t in L.transitions:
            for r in t.A_exact:
                yield from r
            yield from t.B_exact
        yield from L.H0_exact
        D = L.decoder
        if D.per_symbol:
            for m in D.W_exact:
                for r in m:
                    yield from r
            for v in D.c_exact:
                yield from v
        else:
            for r in D.W_exact:
                yield from r
            yield from D.c_exact


def _is_int(x) -> bool:
    return isinstance(x, int) or (isinstance(x, Fraction) and x.denominator == 1)


class ExactLayer:
    """Exact transition and decoding of one layer, with memoization.

    States are tuples of exact values (all cyclotomic values lifted to one field, so tuples hash canonically).
    Integer layers (every A, B, H0 entry an integer: permutations, reflections along e_i - e_j, resets) use int64
    numpy with an overflow guard; others use exact objects (Fraction / Cyc)."""

    def __init__(self, layer: Layer, N: int):
        if not layer.is_exact:
            raise InputError(f"layer {layer.name or ''} has no exact weights")
        self.layer = layer
        self.S = layer.n_symbols
        self.d = layer.width
        lift = lambda x: _lift(x, N)  # noqa: E731
        A = [[[lift(x) for x in r] for r in t.A_exact] for t in layer.transitions]
        Bv = [[lift(x) for x in t.B_exact] for t in layer.transitions]
        self.H0 = tuple(lift(x) for x in layer.H0_exact)
        self.integer = all(_is_int(x) for m in A for r in m for x in r) and \
            all(_is_int(x) for v in Bv for x in v) and all(_is_int(x) for x in self.H0)
        if self.integer:
            self.A = np.array([[[int(x) for x in r] for r in m] for m in A], dtype=np.int64)
            self.B = np.array([[int(x) for x in v] for v in Bv], dtype=np.int64)
            self.H0 = tuple(int(x) for x in self.H0)
            self.amax = int(np.abs(self.A).max()) if self.A.size else 0
        else:
            self.A = np.empty((self.S, self.d, self.d), dtype=object)
            self.B = np.empty((self.S, self.d), dtype=object)
            for s in range(self.S):
                for i in range(self.d):
                    self.B[s, i] = Bv[s][i]
                    for j in range(self.d):
                        self.A[s, i, j] = A[s][i][j]
        D = layer.decoder
        self.per_symbol = D.per_symbol
        if D.per_symbol:
            self.W = [[[lift(x) for x in r] for r in m] for m in D.W_exact]
            self.c = [[lift(x) for x in v] for v in D.c_exact]
        else:
            self.W = [[lift(x) for x in r] for r in D.W_exact]
            self.c = [lift(x) for x in D.c_exact]
        self._succ: dict = {}
        self._dec: dict = {}

    def successors(self, H: tuple) -> list:
        """The next state for every symbol: a list of tuples indexed by symbol."""
        got = self._succ.get(H)
        if got is None:
            if self.integer:
                h = np.array(H, dtype=np.int64)
                hmax = int(np.abs(h).max()) if h.size else 0
                if hmax.bit_length() > MAX_BITS:
                    raise StateGrowthError(f"an exact state entry exceeds {MAX_BITS} bits")
                if self.amax * hmax * self.d + int(np.abs(self.B).max(initial=0)) >= 2 ** 62:
                    prod = (self.A.astype(object) @ h.astype(object)) + self.B.astype(object)
                else:
                    prod = self.A @ h + self.B
                got = [tuple(int(x) for x in row) for row in prod.tolist()]
            else:
                h = np.empty(self.d, dtype=object)
                for i, x in enumerate(H):
                    h[i] = x
                prod = self.A @ h + self.B
                got = [tuple(_canon(x) for x in row) for row in prod]
                for row in got:
                    for x in row:
                        if _bits(x) > MAX_BITS:
                            raise StateGrowthError(f"an exact state entry exceeds {MAX_BITS} bits")
            self._succ[H] = got
        return got

    def decode(self, H: tuple, s: int) -> int:
        """argmax_j (W H + c)_j exactly; raises _Tie when the maximum is not unique."""
        key = (H, s) if self.per_symbol else H
        got = self._dec.get(key)
        if got is None:
            W = self.W[s] if self.per_symbol else self.W
            c = self.c[s] if self.per_symbol else self.c
            scores = []
            for row, cj in zip(W, c):
                acc = cj
                for w, x in zip(row, H):
                    if w != 0 and x != 0:
                        acc = acc + w * x
                scores.append(acc)
            best = 0
            tie = False
            for j in range(1, len(scores)):
                sg = sign(scores[j] - scores[best])
                if sg > 0:
                    best, tie = j, False
                elif sg == 0:
                    tie = True
            got = -1 if tie else best
            self._dec[key] = got
        return got


def _bits(x) -> int:
    if isinstance(x, Cyc):
        return max(_bits(c) for c in x.c)
    return max(x.numerator.bit_length(), x.denominator.bit_length())


def _canon(x):
    if isinstance(x, Cyc):
        return x
    return Fraction(x)


class ExactModel:
    """Exact step function over joint model states (layer states + lag histories); shared by run_exact and the
    certifier."""

    def __init__(self, model: Model):
        if not model.is_exact:
            raise InputError("the model has layers without exact weights: it can run in float64 only")
        self.model = model
        N = common_order(_all_exact_values(model))
        self.layers = [ExactLayer(L, N) for L in model.layers]
        # history depth per source
        maps = [L.input_map for L in model.layers] + [model.readout]
        self.hist_depth: dict = {}
        for tm in maps:
            for r in tm.reads:
                if r.lag:
                    self.hist_depth[r.source] = max(self.hist_depth.get(r.source, 0), r.lag)
        self.hist_sources = sorted(self.hist_depth, key=lambda s: (-1 if s == "input" else s))
        self.pad = {s: model.source_size(s) for s in self.hist_sources}  # pad index = size (the extra slot)

    def initial(self) -> tuple:
        hist = tuple(tuple([self.pad[s]] * self.hist_depth[s]) for s in self.hist_sources)
        return (tuple(L.H0 for L in self.layers), hist)

    def _read(self, tm: TableMap, cur: dict, hist: dict) -> int:
        vals = []
        for r in tm.reads:
            vals.append(cur[r.source] if r.lag == 0 else hist[r.source][r.lag - 1])
        return tm.lookup(vals)

    def step(self, state: tuple, x: int):
        """(joint state, input symbol) -> (new joint state, output index, per-layer outputs). Output -1 = tie."""
        Hs, hist_t = state
        hist = {s: h for s, h in zip(self.hist_sources, hist_t)}
        cur = {"input": x}
        newH = []
        outs = []
        for i, (EL, L) in enumerate(zip(self.layers, self.model.layers)):
            s = self._read(L.input_map, cur, hist)
            H = EL.successors(Hs[i])[s]
            y = EL.decode(H, s)
            if y < 0:
                return None, -1, outs
            cur[i] = y
            newH.append(H)
            outs.append(y)
        out = self._read(self.model.readout, cur, hist)
        new_hist = tuple((cur[s],) + hist[s][:-1] for s in self.hist_sources)
        return (tuple(newH), new_hist), out, outs


def run_exact(model: Model, word: Sequence[int]) -> list:
    """Run one word exactly; returns the output index after every step (-1 where a decoder tie occurred)."""
    word = index_words(word, len(model.alphabet), "run_exact: word")
    if word.shape[0] != 1:
        raise InputError(f"run_exact: one word (a 1-D sequence), got a batch of {word.shape[0]}")
    em = ExactModel(model)
    st = em.initial()
    out = []
    for x in word[0].tolist():
        st, y, _ = em.step(st, x)
        out.append(y)
        if st is None:
            break
    return out
