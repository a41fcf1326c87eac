"""Random input words for an automaton (``lrnnkit run MODEL --random N``).

Uniform random letters are mostly ungrammatical for automata with an error state: a uniform word of 10 letters
over ``mod-arith:5``'s alphabet (5 digits, 3 operators; digits and operators must alternate) is well formed with
probability (5/8)^5 (3/8)^5 ~ 7e-4, and after its first slip every output is "error". :func:`random_word`
therefore avoids **traps** by default.

A *trap* is a state from which the output can never change again: every state reachable from it (itself included)
has the same output label (mod-arith's absorbing "error" state, a regex automaton's rejecting sink). At each step
the letter is drawn uniformly among the letters that do not enter a trap; when every letter enters one (or the
walk is already in one), uniformly among all letters. The start state's trap-ness does not matter. Words drawn this
way are prefixes of well-formed words whenever the language has a trap for its error state.
"""
from __future__ import annotations

import numpy as np

from .fsa import FSA

__all__ = ["trap_states", "random_word"]


def trap_states(fsa: FSA) -> np.ndarray:
    """Boolean mask of the states whose reachable states all share one output label (module docstring).

    A state is *not* a trap iff it reaches a state of another label. A state with a letter into a state of another
    label is not a trap, and neither is any state with a letter into a non-trap state (it reaches what that one
    reaches, or differs from it already): the non-traps are the backward closure of the first kind, one
    breadth-first search over the reversed transitions, O(states x letters)."""
    out = [fsa.outputs[q] for q in range(fsa.n_states)]
    code = np.unique(np.asarray(out, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)
    delta = np.asarray(fsa.delta, dtype=np.int64)
    n, k = delta.shape
    nontrap = (code[delta] != code[:, None]).any(axis=1)
    # reversed edges: for each target r, the sources q with delta[q, a] = r
    src = np.repeat(np.arange(n), k)
    dst = delta.reshape(-1)
    order = np.argsort(dst, kind="stable")
    src, dst = src[order], dst[order]
    starts = np.searchsorted(dst, np.arange(n + 1))
    stack = np.flatnonzero(nontrap).tolist()
    while stack:
        r = stack.pop()
        for q in src[starts[r]:starts[r + 1]].tolist():
            if not nontrap[q]:
                nontrap[q] = True
                stack.append(q)
    return ~nontrap


def random_word(fsa: FSA, length: int, seed: int = 0, *, avoid_traps: bool = True) -> list[int]:
    """A random word of ``length`` letters (indices) from ``numpy.random.default_rng(seed)``: uniform letters, except
    that letters entering a trap are avoided while another letter is possible (``avoid_traps=False``: uniform)."""
    rng = np.random.default_rng(seed)
    k = fsa.n_letters
    if not avoid_traps or length == 0:
        return rng.integers(0, k, size=length).tolist()
    trap = trap_states(fsa)
    if not trap.any():
        return rng.integers(0, k, size=length).tolist()
    delta = np.asarray(fsa.delta, dtype=np.int64)
    allowed = [np.flatnonzero(~trap[delta[q]]) for q in range(fsa.n_states)]
    q = fsa.start
    word = []
    for _ in range(length):
        ok = allowed[q]
        a = int(ok[rng.integers(0, len(ok))]) if len(ok) else int(rng.integers(0, k))
        word.append(a)
        q = int(delta[q, a])
    return word
