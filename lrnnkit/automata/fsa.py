"""The finite-state automaton type.

Conventions (docs/conventions.rst, pinned by tests):

* states are ``0..n-1``; the start state is ``start`` (0 by default);
* symbols are strings in files and ``0..k-1`` inside; ``alphabet[a]`` is the name of symbol ``a``;
* ``delta[q, a]`` is the next state, and a word is read left to right:
  ``delta(q, a b) = delta(delta(q, a), b)``;
* every state has an output label ``outputs[q]`` (a string). It is, in this order of precedence: the explicit
  ``labels`` (automata that output a value: group word problems output the group element, modular arithmetic the
  residue), ``"1"``/``"0"`` for accepting/rejecting states when an accepting set is given, or the state's own index
  (state tracking: the output is the state itself).
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from .. import limits
from ..errors import InputError
from .words import split_word

__all__ = ["FSA"]


def _fail(msg: str) -> None:
    raise InputError(msg)


def _per_state(values, what: str, n: int) -> tuple | None:
    """One name per state (output labels, state names) as strings, each within the name limits; None stays None."""
    if values is None:
        return None
    values = tuple(str(x) for x in values)
    for x in values:
        limits.check_name(x, what)
    if len(values) != n:
        _fail(f"{len(values)} {what}s given for {n} states")
    return values


@dataclass(frozen=True, eq=False)
class FSA:
    """A complete deterministic finite automaton with per-state output labels.

    Parameters
    ----------
    alphabet : sequence of distinct non-empty strings (k >= 1)
    delta : integer array of shape (n, k), ``delta[q, a]`` in ``0..n-1``
    start : the start state
    accepting : optional set of accepting states
    labels : optional output label per state (overrides ``accepting`` for :attr:`outputs`)
    state_names : optional readable name per state (e.g. the group element a state stands for)
    name : a human-readable name (``"parity"``, ``"group:S5"``)
    """

    alphabet: tuple
    delta: np.ndarray
    start: int = 0
    accepting: frozenset | None = None
    labels: tuple | None = None
    state_names: tuple | None = None
    name: str = ""
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        alphabet = tuple(self.alphabet)
        if len(alphabet) == 0:
            _fail("empty alphabet: an automaton needs at least one input symbol")
        limits.check_name(self.name, "the automaton's name")
        for s in alphabet:
            if not isinstance(s, str) or s == "":
                _fail(f"alphabet symbols must be non-empty strings, got {limits.shorten(s)}")
            limits.check_name(s, "alphabet symbol")
            if any(ch.isspace() for ch in s):
                _fail(f"alphabet symbol {limits.shorten(s)} contains white space (words are written space-separated)")
        if len(set(alphabet)) != len(alphabet):
            dup = sorted(s for s, c in Counter(alphabet).items() if c > 1)
            _fail(f"duplicate alphabet symbols: {dup[:10]}"[:300])
        fast = None
        if isinstance(self.delta, np.ndarray) and self.delta.dtype.kind in "iu" and self.delta.ndim == 2:
            fast = self.delta
        else:
            try:
                arr = np.asarray(self.delta)
                if arr.dtype.kind in "iu" and arr.ndim == 2:
                    fast = arr
            except (ValueError, TypeError):
                pass
        if fast is not None and fast.shape[1] == len(alphabet) and fast.shape[0] > 0 \
                and fast.min() >= 0 and fast.max() < fast.shape[0]:
            # vectorized path: a rectangular integer table with every target in range (the per-entry loop
            # below only runs to produce the error message for bad tables)
            delta = fast.astype(np.int64, copy=True)
            n = delta.shape[0]
            self._finish(alphabet, delta, n)
            return
        try:
            delta = np.array(self.delta, dtype=object)
        except Exception as exc:  # ragged lists
            _fail(f"transition table is not rectangular: {exc}")
        if delta.ndim != 2 or delta.shape[1] != len(alphabet):
            _fail(f"transition table must have shape (states, {len(alphabet)} symbols), got {delta.shape}")
        n = delta.shape[0]
        if n == 0:
            _fail("an automaton needs at least one state")
        for q in range(n):
            for a in range(len(alphabet)):
                t = delta[q, a]
                if t is None:
                    _fail(f"missing transition from state {q} on symbol {alphabet[a]!r}")
                if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
                    _fail(f"transition from state {q} on {alphabet[a]!r} is {t!r}, not a state index")
                if not 0 <= int(t) < n:
                    _fail(f"transition from state {q} on {alphabet[a]!r} goes to {int(t)}, "
                          f"out of range 0..{n - 1}")
        delta = delta.astype(np.int64)
        self._finish(alphabet, delta, n)

    def _finish(self, alphabet: tuple, delta: np.ndarray, n: int) -> None:
        delta.setflags(write=False)
        if isinstance(self.start, bool) or not isinstance(self.start, (int, np.integer)) or not 0 <= self.start < n:
            _fail(f"start state {self.start!r} out of range 0..{n - 1}")
        acc = self.accepting
        if acc is not None:
            acc = frozenset(int(q) for q in acc)
            bad = sorted(q for q in acc if not 0 <= q < n)
            if bad:
                _fail(f"accepting states {bad} out of range 0..{n - 1}")
        labels = _per_state(self.labels, "output label", n)
        names = _per_state(self.state_names, "state name", n)
        object.__setattr__(self, "alphabet", alphabet)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "start", int(self.start))
        object.__setattr__(self, "accepting", acc)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "state_names", names)

    # ------------------------------------------------------------------ basic shape
    @property
    def n_states(self) -> int:
        return int(self.delta.shape[0])

    @property
    def n_letters(self) -> int:
        return len(self.alphabet)

    @property
    def outputs(self) -> tuple:
        """The output label of every state (see the module docstring for the precedence)."""
        if "outputs" not in self._cache:
            if self.labels is not None:
                out = self.labels
            elif self.accepting is not None:
                out = tuple("1" if q in self.accepting else "0" for q in range(self.n_states))
            else:
                out = tuple(str(q) for q in range(self.n_states))
            self._cache["outputs"] = out
        return self._cache["outputs"]

    @property
    def output_alphabet(self) -> tuple:
        """The distinct output labels, in order of first appearance by state index."""
        seen: dict = {}
        for lab in self.outputs:
            seen.setdefault(lab, None)
        return tuple(seen)

    def transformations(self) -> list[tuple[int, ...]]:
        """Each letter as a transformation of the states: the image list ``(delta[0,a], ..., delta[n-1,a])``."""
        return [tuple(int(x) for x in self.delta[:, a]) for a in range(self.n_letters)]

    # ------------------------------------------------------------------ words
    def encode(self, word: str | Iterable[str]) -> list[int]:
        """Symbol names (a space-separated string, a plain string over one-character symbols, or a sequence;
        :func:`lrnnkit.automata.words.split_word`) to indices; unknown symbols are an InputError."""
        word = split_word(word, self.alphabet)
        index = self.symbol_index
        out = []
        for s in word:
            if s not in index:
                _fail(f"unknown symbol {s!r}; the alphabet is {list(self.alphabet)[:20]}"
                      + (" ..." if self.n_letters > 20 else ""))
            out.append(index[s])
        return out

    @property
    def symbol_index(self) -> dict:
        if "symbol_index" not in self._cache:
            self._cache["symbol_index"] = {s: i for i, s in enumerate(self.alphabet)}
        return self._cache["symbol_index"]

    def trace(self, word: Sequence[int], state: int | None = None) -> list[int]:
        """The states after each prefix of ``word`` (length ``len(word)``), starting from ``state`` (default start)."""
        q = self.start if state is None else state
        out = []
        d = self.delta
        for a in word:
            q = int(d[q, a])
            out.append(q)
        return out

    def run(self, word: Sequence[int], state: int | None = None) -> int:
        """The state reached after reading ``word``."""
        q = self.start if state is None else state
        for a in word:
            q = int(self.delta[q, a])
        return q

    def output_trace(self, word: Sequence[int]) -> list[str]:
        """The output label after each prefix of ``word``."""
        outs = self.outputs
        return [outs[q] for q in self.trace(word)]

    def trace_batch(self, words: np.ndarray) -> np.ndarray:
        """Vectorized :meth:`trace` for an integer array of words, shape (B, T) -> states (B, T)."""
        words = np.asarray(words, dtype=np.int64)
        B, T = words.shape
        q = np.full(B, self.start, dtype=np.int64)
        out = np.empty((B, T), dtype=np.int64)
        for t in range(T):
            q = self.delta[q, words[:, t]]
            out[:, t] = q
        return out

    # ------------------------------------------------------------------ identity
    def to_dict(self) -> dict:
        d = {
            "format": "lrnnkit.fsa",
            "version": 1,
            "name": self.name,
            "alphabet": list(self.alphabet),
            "states": self.n_states,
            "start": self.start,
            "delta": self.delta.tolist(),
        }
        if self.accepting is not None:
            d["accepting"] = sorted(self.accepting)
        if self.labels is not None:
            d["labels"] = list(self.labels)
        if self.state_names is not None:
            d["state_names"] = list(self.state_names)
        return d

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of the automaton's behaviour (name excluded): model provenance."""
        d = self.to_dict()
        d.pop("name")
        blob = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def with_outputs(self, labels: Sequence[str]) -> "FSA":
        return FSA(self.alphabet, self.delta, self.start, None, tuple(labels), self.state_names, self.name)

    def __repr__(self) -> str:
        return f"FSA(name={self.name!r}, states={self.n_states}, alphabet={list(self.alphabet)[:8]}{'...' if self.n_letters > 8 else ''})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FSA):
            return NotImplemented
        return (self.alphabet == other.alphabet and np.array_equal(self.delta, other.delta)
                and self.start == other.start and self.outputs == other.outputs)

    def __hash__(self) -> int:
        return hash(self.content_hash())
