"""The transition monoid of an automaton, computed by closure.

Conventions (docs/conventions.rst; pinned by ``proofs_tests/automata/test_monoid.py``):

* A transformation of the points ``0..n-1`` is stored as its image list ``x = (0.x, 1.x, ..., (n-1).x)``.
  Transformations act on the **right**, as in GAP: ``q . x``.
* The product ``x y`` means "first ``x``, then ``y``": ``q . (x y) = (q . x) . y``, i.e. as arrays
  ``(x y)[q] = y[x[q]]`` (numpy: ``y[x]``).
* The transition monoid of an automaton ``(Sigma, Q, q0, delta)`` is ``T(A) = {delta_w : w in Sigma*}`` with
  ``q . delta_w = delta(q, w)`` (paper 000, Section 4, "transition monoid"); it contains the identity
  (``w`` = the empty word) and ``delta_{uv} = delta_u delta_v``.

Every element carries a **shortest witness word** (breadth-first search from the identity over the right Cayley
graph; letters tried in alphabet order, parents in discovery order, so the witness is the shortlex-least word
that realises the element). The **right Cayley graph** ``cayley[i, a]`` is the index of ``element_i . a``.

Closure is vectorised: a BFS frontier of ``m`` elements is an ``(m, n)`` integer array, all ``k`` products with
the generators are one fancy-indexing operation ``gens[:, frontier]``, and rows are hashed as integers
(``sum x[q] n^q`` while ``n^n < 2^63``, else as raw bytes) into one dict. Python's dict is the hash table: a
pure-numpy sort-merge would need a re-sort per BFS level, which is slower for deep monoids (a cyclic monoid of
order N has N levels). No library offers transformation-monoid closure (sympy has permutation groups only; GAP
is an external system used as the test oracle), hence this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import InputError, SizeLimitError

__all__ = ["TransformationMonoid", "closure", "transition_monoid", "DEFAULT_CAP", "compose",
           "is_permutation", "RowEncoder"]

DEFAULT_CAP = 1_000_000


def compose(x: Sequence[int], y: Sequence[int]) -> tuple:
    """The product ``x y`` (first ``x``, then ``y``) of two transformations given as image lists."""
    return tuple(int(y[int(q)]) for q in x)


def is_permutation(x: Sequence[int]) -> bool:
    return sorted(int(v) for v in x) == list(range(len(x)))


class RowEncoder:
    """Hashable keys for the rows of an ``(m, n)`` array with entries in ``0..n-1`` (vectorised)."""

    def __init__(self, n: int):
        self.n = n
        self.poly = n ** n < 2 ** 63 if n > 1 else True
        if self.poly:
            self.powers = np.array([n ** i for i in range(n)], dtype=np.int64)

    def keys(self, rows: np.ndarray) -> list:
        if self.poly:
            return (rows.astype(np.int64) @ self.powers).tolist()
        rows = np.ascontiguousarray(rows)
        return rows.view(np.dtype((np.void, rows.dtype.itemsize * self.n))).ravel().tolist()

    def key(self, row) -> object:
        return self.keys(np.asarray(row, dtype=_dtype(self.n))[None, :])[0]


def _dtype(n: int):
    return np.uint8 if n <= 256 else (np.uint16 if n <= 65536 else np.int64)


@dataclass(eq=False)
class TransformationMonoid:
    """A finite transformation monoid on ``n`` points with its generators (the letters).

    ``elements[0]`` is the identity; ``elements[i]`` is realised by the shortest word :meth:`word` ``(i)``;
    ``cayley[i, a]`` is the index of ``elements[i] . generators[a]`` (right Cayley graph).
    """

    n: int
    generators: np.ndarray
    elements: np.ndarray
    parent: np.ndarray
    letter: np.ndarray
    cayley: np.ndarray
    _index: dict = field(repr=False)
    _encoder: RowEncoder = field(repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return int(self.elements.shape[0])

    def __len__(self) -> int:
        return self.size

    @property
    def n_letters(self) -> int:
        return int(self.generators.shape[0])

    def element(self, i: int) -> tuple:
        return tuple(int(v) for v in self.elements[i])

    def index(self, x: Sequence[int]) -> int:
        """Index of the transformation ``x`` (image list); KeyError if it is not in the monoid."""
        if len(x) != self.n:
            raise KeyError(tuple(x))
        return self._index[self._encoder.key(x)]

    def __contains__(self, x) -> bool:
        try:
            self.index(x)
            return True
        except (KeyError, ValueError, OverflowError):
            return False

    def word(self, i: int) -> list[int]:
        """The shortlex-least word (letter indices) whose transformation is ``elements[i]`` (empty for 0)."""
        out = []
        while i != 0:
            out.append(int(self.letter[i]))
            i = int(self.parent[i])
        return out[::-1]

    def act(self, i: int, word: Sequence[int]) -> int:
        """Index of ``elements[i] . w`` (follows the Cayley graph)."""
        for a in word:
            i = int(self.cayley[i, a])
        return i

    def multiply(self, i: int, j: int) -> int:
        """Index of the product ``elements[i] elements[j]`` (first i, then j)."""
        return self.act(i, self.word(j))

    @property
    def is_group(self) -> bool:
        """True iff every element is a permutation (for a monoid containing the identity: iff it is a group)."""
        return bool(all(is_permutation(g) for g in self.generators))

    @property
    def is_aperiodic(self) -> bool:
        """True iff every element ``x`` has ``x^k = x^{k+1}`` for some ``k`` (no non-trivial subgroup).

        For a transformation ``x`` of ``n`` points, ``x^n`` maps every point into a cycle of ``x``'s functional
        graph, and ``x^{n+1} = x^n`` iff every such cycle is a fixed point; so the test is exact with ``k = n``.
        """
        if "aperiodic" not in self._cache:
            if self.is_group:
                ap = self.size == 1
            else:
                ap = True
                E = self.elements.astype(np.int64)
                for start in range(0, E.shape[0], 65536):
                    X = E[start:start + 65536]
                    Y = X
                    for _ in range(self.n - 1):
                        Y = np.take_along_axis(X, Y, axis=1)
                    if not np.array_equal(np.take_along_axis(X, Y, axis=1), Y):
                        ap = False
                        break
            self._cache["aperiodic"] = ap
        return self._cache["aperiodic"]

    def idempotents(self) -> list[int]:
        E = self.elements.astype(np.int64)
        sq = np.take_along_axis(E, E, axis=1)
        return [int(i) for i in np.nonzero((sq == E).all(axis=1))[0]]

    def multiplication_table(self, cap: int = 4096) -> np.ndarray:
        """``table[i, j]`` = index of ``elements[i] elements[j]``; refuses monoids larger than ``cap``."""
        N = self.size
        if N > cap:
            raise SizeLimitError(f"multiplication table of a monoid with {N} elements exceeds cap {cap}")
        if "table" not in self._cache:
            E = self.elements.astype(np.int64)
            table = np.empty((N, N), dtype=np.int64)
            for j in range(N):
                prod = E[j][E]  # row i: first elements[i], then elements[j]
                keys = self._encoder.keys(prod.astype(self.elements.dtype))
                table[:, j] = [self._index[k] for k in keys]
            self._cache["table"] = table
        return self._cache["table"]


def closure(generators, n: int | None = None, *, cap: int = DEFAULT_CAP, what: str = "monoid") -> TransformationMonoid:
    """The monoid generated by transformations (image lists of equal length ``n``), with the identity.

    Raises :class:`SizeLimitError` once more than ``cap`` elements are found, giving the numbers.
    """
    gens = [list(g) for g in generators]
    if n is None:
        if not gens:
            raise InputError("closure needs n when there are no generators")
        n = len(gens[0])
    if n < 1:
        raise InputError(f"transformations need at least one point, got n = {n}")
    for g in gens:
        if len(g) != n:
            raise InputError(f"generator {g} has {len(g)} images, expected {n}")
        for v in g:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < n:
                raise InputError(f"generator {g} has image {v!r} outside 0..{n - 1}")
    dt = _dtype(n)
    G = np.array(gens, dtype=dt).reshape(len(gens), n)
    k = G.shape[0]
    enc = RowEncoder(n)
    ident = np.arange(n, dtype=dt)
    index = {enc.key(ident): 0}
    chunks, parents, letters, cay = [ident[None, :]], [np.array([-1])], [np.array([-1])], []
    frontier_idx = np.array([0], dtype=np.int64)
    frontier = ident[None, :]
    total = 1
    depth = 0
    while frontier.shape[0] and k:
        m = frontier.shape[0]
        # cand[j*k + a] = frontier[j] . G[a]  ==  G[a][frontier[j]]
        cand = G[:, frontier].transpose(1, 0, 2).reshape(m * k, n)
        keys = enc.keys(cand)
        idx = np.empty(m * k, dtype=np.int64)
        new = []
        get = index.get
        for j, key in enumerate(keys):
            i = get(key)
            if i is None:
                i = total
                total += 1
                index[key] = i
                new.append(j)
                if total > cap:
                    break
            idx[j] = i
        if total > cap:
            raise SizeLimitError(
                f"{what} exceeds cap {cap} elements: {total} found after words of length <= {depth + 1} "
                f"({n} points, {k} generators); raise the cap or use a smaller automaton")
        cay.append(idx.reshape(m, k))
        new = np.array(new, dtype=np.int64)
        depth += 1
        frontier = cand[new]
        chunks.append(frontier)
        parents.append(frontier_idx[new // k])
        letters.append(new % k)
        frontier_idx = np.arange(total - len(new), total, dtype=np.int64)
    elements = np.concatenate(chunks, axis=0)
    elements.setflags(write=False)
    cayley = np.concatenate(cay, axis=0) if cay else np.zeros((1, 0), dtype=np.int64)
    return TransformationMonoid(n=n, generators=G, elements=elements, parent=np.concatenate(parents),
                                letter=np.concatenate(letters), cayley=cayley, _index=index, _encoder=enc)


def transition_monoid(fsa, *, cap: int = DEFAULT_CAP) -> TransformationMonoid:
    """``T(A)``: the monoid of the letters of ``fsa`` acting on its states (all states, as given).

    Cached on the automaton per cap.
    """
    key = ("monoid", cap)
    cache = getattr(fsa, "_cache", None)
    if cache is not None and key in cache:
        return cache[key]
    M = closure(fsa.transformations(), fsa.n_states, cap=cap,
                what=f"transition monoid of {fsa.name or 'the automaton'}")
    if cache is not None:
        cache[key] = M
    return M
