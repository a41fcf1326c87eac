"""Small hand-built models for the kernel tests and benchmarks (no dependence on the constructions package).

:func:`permutation_group_model` is the one-layer construction of paper 000, Theorem 3 written out directly: the
word problem of a permutation group G <= S_n over a chosen alphabet of elements, state ``H_t = P(g_1 ... g_t) H_0``
with ``H_0 = (1, ..., n)``, ``P(p)[p[i], i] = 1`` (so the word's matrix is ``P(g_t) ... P(g_1)``, docs/conventions.rst
conventions, products "first g_1"), every letter a product of transposition reflections ``G(2, e_i - e_j)``, and a
nearest-reference decoder over the states of all elements of G.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np

from ..model import Decoder, GHFactor, Layer, Model, TableMap, Transition


def compose(p, q) -> tuple:
    """``p q`` = first p, then q (right action, as GAP): ``(p q)[i] = q[p[i]]``."""
    return tuple(q[i] for i in p)


def reflection_factors(p) -> list:
    """GH factors (beta = 2, u = e_i - e_j), applied first to last, whose product is P(p)."""
    n = len(p)
    cur = list(range(n))          # images realised so far: the product maps i -> cur[i]
    swaps = []
    # left-multiplying by the swap (a b) relabels images a <-> b; fix the images one point at a time
    for i in range(n):
        if cur[i] != p[i]:
            a, b = cur[i], p[i]
            swaps.append((a, b))
            cur = [b if x == a else a if x == b else x for x in cur]
    assert tuple(cur) == tuple(p)
    out = []
    for a, b in swaps:
        u = [Fraction(0)] * n
        u[a], u[b] = Fraction(1), Fraction(-1)
        out.append(GHFactor.exact(2, u))
    return out


def permutation_group_model(n: int, letters: list | None = None, name: str = "") -> Model:
    """Word problem of S_n (all n! elements as outputs) over ``letters`` (image tuples; default all elements)."""
    elems = sorted(permutations(range(n)))
    letters = [tuple(x) for x in (letters if letters is not None else elems)]
    H0 = [Fraction(i + 1) for i in range(n)]
    trans = [Transition.from_factors(reflection_factors(p), n) for p in letters]
    refs = []
    for g in elems:  # P(g) H0: entry g[i] holds i + 1
        r = [Fraction(0)] * n
        for i in range(n):
            r[g[i]] = H0[i]
        refs.append(r)
    labels = [" ".join(map(str, g)) for g in elems]
    dec = Decoder.nearest(refs, labels)
    layer = Layer("gh", n, trans, np.arange(1.0, n + 1), TableMap.identity("input", len(letters)), dec,
                  H0_exact=H0, name=f"S{n}")
    return Model([" ".join(map(str, p)) for p in letters], [layer], TableMap.identity(0, len(elems)), labels,
                 name=name or f"S{n} word problem")


def group_truth(n: int, letters: list, words: np.ndarray) -> np.ndarray:
    """Ground truth for :func:`permutation_group_model`: index (into the sorted elements) of each prefix product,
    by table lookup on exact permutations (numpy, vectorized over rows)."""
    elems = sorted(permutations(range(n)))
    index = {g: i for i, g in enumerate(elems)}
    lidx = [index[tuple(p)] for p in letters]
    mul = np.array([[index[compose(g, letters[a])] for a in range(len(letters))] for g in elems], dtype=np.int64)
    words = np.asarray(words, dtype=np.int64)
    out = np.empty_like(words)
    cur = np.full(words.shape[0], index[tuple(range(n))], dtype=np.int64)
    for t in range(words.shape[1]):
        cur = mul[cur, words[:, t]]
        out[:, t] = cur
    del lidx
    return out
