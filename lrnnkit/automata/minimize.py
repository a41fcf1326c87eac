"""Reachable part, minimisation w.r.t. the output labels, and equivalence of automata.

Two states are equivalent iff every word (the empty word included) leads them to states with equal outputs
(Moore machines: the output is a function of the state). :func:`minimize` computes the coarsest such partition by
Moore's partition refinement, vectorised: a round replaces every state's class by the class of the tuple
``(class[q], class[delta[q, a]] for all a)`` (``np.unique`` over rows), until the number of classes is stable
(at most ``n`` rounds, ``O(n k)`` each). Hopcroft's algorithm has the better ``O(n k log n)`` bound, but the
vectorised Moore rounds are faster in numpy at the sizes lrnnkit handles (<= 10^5 states).

The minimal automaton is returned in canonical form: states numbered in breadth-first order from the start state
(letters in alphabet order), so two automata over the same alphabet are equivalent iff their minimised forms are
equal (``FSA.__eq__``). No library covers Moore-machine minimisation over arbitrary output labels (automata-lib
and interegular minimise acceptors only), hence this module.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ..errors import InputError
from .fsa import FSA

__all__ = ["reachable_states", "reachable", "minimize", "minimal_states", "equivalence_classes",
           "distinguishing_word", "equivalent"]


def reachable_states(fsa: FSA) -> list[int]:
    """States reachable from the start, in BFS order (letters in alphabet order)."""
    seen = {fsa.start}
    order = [fsa.start]
    d = fsa.delta
    for q in order:
        for t in d[q].tolist():
            if t not in seen:
                seen.add(t)
                order.append(t)
    return order


def _restrict(fsa: FSA, order: list[int], name: str | None = None) -> FSA:
    new = {q: i for i, q in enumerate(order)}
    delta = np.vectorize(new.__getitem__, otypes=[np.int64])(fsa.delta[order]) if order else fsa.delta[:0]
    outs = fsa.outputs
    labels = tuple(outs[q] for q in order)
    names = tuple(fsa.state_names[q] for q in order) if fsa.state_names is not None else None
    if fsa.labels is None and fsa.accepting is not None:
        acc = frozenset(new[q] for q in order if q in fsa.accepting)
        return FSA(fsa.alphabet, delta, 0, acc, None, names, fsa.name if name is None else name)
    return FSA(fsa.alphabet, delta, 0, None, labels, names, fsa.name if name is None else name)


def reachable(fsa: FSA) -> FSA:
    """The reachable part, states renumbered in BFS order from the start; outputs preserved (as labels)."""
    return _restrict(fsa, reachable_states(fsa))


def equivalence_classes(fsa: FSA) -> np.ndarray:
    """``cls[q]``: the class of state ``q`` under output equivalence (all states, reachable or not)."""
    outs = fsa.outputs
    lab = {}
    cls = np.array([lab.setdefault(o, len(lab)) for o in outs], dtype=np.int64)
    count = len(lab)
    d = fsa.delta
    while True:
        sig = np.concatenate([cls[:, None], cls[d]], axis=1)
        _, new = np.unique(sig, axis=0, return_inverse=True)
        new = new.reshape(-1)
        c = int(new.max()) + 1
        cls = new
        if c == count:
            return cls
        count = c


def minimize(fsa: FSA) -> FSA:
    """The minimal automaton with the same output for every word, in canonical BFS numbering.

    State names are dropped (a merged state has several); outputs are kept as labels (or as the accepting set
    when the input used one).
    """
    cls = equivalence_classes(fsa)
    d = fsa.delta
    # BFS over classes from the start's class
    rep = {}
    order = []
    start_c = int(cls[fsa.start])
    rep[start_c] = fsa.start
    order.append(start_c)
    for c in order:
        q = rep[c]
        for t in d[q].tolist():
            tc = int(cls[t])
            if tc not in rep:
                rep[tc] = t
                order.append(tc)
    num = {c: i for i, c in enumerate(order)}
    delta = np.array([[num[int(cls[t])] for t in d[rep[c]].tolist()] for c in order], dtype=np.int64)
    outs = fsa.outputs
    if fsa.labels is None and fsa.accepting is not None:
        acc = frozenset(num[c] for c in order if rep[c] in fsa.accepting)
        return FSA(fsa.alphabet, delta, 0, acc, None, None, fsa.name)
    return FSA(fsa.alphabet, delta, 0, None, tuple(outs[rep[c]] for c in order), None, fsa.name)


def minimal_states(fsa: FSA) -> int:
    """Number of states of the minimal automaton (reachable states up to output equivalence)."""
    return minimize(fsa).n_states


def distinguishing_word(a: FSA, b: FSA) -> list[int] | None:
    """A shortest word (letter indices) after which ``a`` and ``b`` output different labels, or None.

    The empty word counts (start outputs differ -> ``[]``). Both automata must have the same alphabet.
    """
    if a.alphabet != b.alphabet:
        raise InputError(f"cannot compare automata over different alphabets: {list(a.alphabet)[:10]} vs "
                         f"{list(b.alphabet)[:10]}")
    oa, ob = a.outputs, b.outputs
    start = (a.start, b.start)
    parent = {start: None}
    queue = deque([start])
    while queue:
        p, q = queue.popleft()
        if oa[p] != ob[q]:
            word = []
            node = (p, q)
            while parent[node] is not None:
                node, letter = parent[node]
                word.append(letter)
            return word[::-1]
        for x in range(a.n_letters):
            nxt = (int(a.delta[p, x]), int(b.delta[q, x]))
            if nxt not in parent:
                parent[nxt] = ((p, q), x)
                queue.append(nxt)
    return None


def equivalent(a: FSA, b: FSA) -> bool:
    """True iff ``a`` and ``b`` output the same label after every word."""
    return distinguishing_word(a, b) is None
