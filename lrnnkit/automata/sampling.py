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

    Computed as a greatest fixed point: start from "every state is a trap of its own label" and remove a state
    while some letter leads to a state that is not a trap or whose label differs."""
    out = np.asarray([fsa.outputs[q] for q in range(fsa.n_states)], dtype=object)
    labels = {lab: i for i, lab in enumerate(dict.fromkeys(out.tolist()))}
    code = np.array([labels[x] for x in out.tolist()], dtype=np.int64)
    trap = np.ones(fsa.n_states, dtype=bool)
    delta = np.asarray(fsa.delta, dtype=np.int64)
    while True:
        ok = trap[delta].all(axis=1) & (code[delta] == code[:, None]).all(axis=1)
        new = trap & ok
        if np.array_equal(new, trap):
            return trap
        trap = new


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
