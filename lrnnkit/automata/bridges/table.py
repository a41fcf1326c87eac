"""The meeting point of every bridge: a named state table, possibly partial, turned into an :class:`FSA`.

Each foreign automaton (automata-lib, AALpy, Graphviz DOT) is first read into a :class:`StateTable`: state names
in a fixed order, the start state, ``delta[q][a]`` (a state index or ``None`` where the automaton has no
transition), and either an accepting set (an acceptor: outputs ``"1"``/``"0"``) or one output label per state
(a Moore machine). :func:`to_fsa` then checks it once, here, for every bridge.

Partial automata. lrnnkit automata are complete (docs/conventions.rst). A table with missing transitions is
refused with a message that says how to proceed, unless completion was asked for (``complete=True``, or
``complete="NAME"``; command line ``--complete [--sink NAME]``): then one new state, named ``sink`` (or NAME),
is added; every missing transition goes to it and it loops on every letter. The sink rejects in an acceptor; in a
Moore machine its output is its name. Nothing is ever completed silently, and a complete table is never changed.

:func:`determinise` is the subset construction (Rabin and Scott 1959) with epsilon closures, for NFAs: its empty
set is an ordinary state of the construction (named ``{}``), not an added sink.
"""
from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from ... import limits
from ...errors import InputError, SizeLimitError
from ..fsa import FSA

__all__ = ["StateTable", "to_fsa", "determinise", "SINK", "check_size"]

SINK = "sink"


@dataclass
class StateTable:
    """``names[q]``: the state's name; ``delta[q][a]``: a state index or None (missing); ``accepting`` (a set
    of indices, for an acceptor) or ``outputs`` (one label per state, for a Moore machine); never both."""
    alphabet: list
    names: list
    start: int
    delta: list
    accepting: set | None = None
    outputs: list | None = None
    name: str = ""


def check_size(n_states: int, n_letters: int, where: str) -> None:
    """The general automaton caps of :mod:`lrnnkit.limits`, checked before a table is built."""
    if n_letters > limits.MAX_LETTERS or n_states > limits.MAX_STATES \
            or n_states * max(n_letters, 1) > limits.MAX_TRANSITIONS:
        raise SizeLimitError(f"{where}: {n_states} states x {n_letters} letters = {n_states * n_letters} "
                             f"transitions; automata have at most {limits.MAX_STATES} states, {limits.MAX_LETTERS} "
                             f"letters and {limits.MAX_TRANSITIONS} transitions (lrnnkit.limits.MAX_STATES / "
                             "MAX_LETTERS / MAX_TRANSITIONS)")


def _sink_name(complete, names: Sequence[str], where: str) -> str:
    name = SINK if complete is True else complete
    if not isinstance(name, str) or not name.strip() or any(ch.isspace() for ch in name):
        raise InputError(f"{where}: the sink state's name must be a non-empty string without white space, "
                         f"got {name!r}")
    if name in names:
        raise InputError(f"{where}: cannot complete the automaton with a sink named {name!r}: a state of that "
                         "name exists (choose another: complete='NAME', command line --sink NAME)")
    return name


def to_fsa(t: StateTable, where: str, complete: bool | str = False) -> FSA:
    """The complete :class:`FSA` of ``t`` (module docstring); ``where`` names the input in messages."""
    k = len(t.alphabet)
    if k == 0:
        raise InputError(f"{where}: empty alphabet: an automaton needs at least one input symbol")
    check_size(len(t.names), k, where)
    symbols = [str(a) for a in t.alphabet]
    if len(set(symbols)) != len(symbols):
        dup = sorted(s for s, c in Counter(symbols).items() if c > 1)
        raise InputError(f"{where}: input symbols {dup[:10]} coincide when written as strings"[:300])
    missing = [(q, a) for q, row in enumerate(t.delta) for a, x in enumerate(row) if x is None]
    if missing and complete:
        check_size(len(t.names) + 1, k, where)       # the sink state it will get
    names = [str(x) for x in t.names]
    delta = [list(row) for row in t.delta]
    accepting = None if t.accepting is None else set(t.accepting)
    outputs = None if t.outputs is None else [str(x) for x in t.outputs]
    if missing:
        q, a = missing[0]
        if not complete:
            raise InputError(
                f"{where}: partial automaton: state {names[q]!r} has no transition on {symbols[a]!r} "
                f"({len(missing)} missing transition{'s' if len(missing) > 1 else ''}); lrnnkit automata are "
                f"complete: pass complete=True (command line: --complete) to send them to a new "
                f"{'rejecting ' if outputs is None else ''}sink state named {SINK!r}")
        sink = _sink_name(complete, names, where)
        s = len(names)
        names.append(sink)
        delta = [[s if x is None else x for x in row] for row in delta] + [[s] * k]
        if outputs is not None:
            outputs.append(sink)
    unique = len(set(names)) == len(names)
    try:
        return FSA(tuple(symbols), delta, t.start, accepting, tuple(outputs) if outputs is not None else None,
                   tuple(names) if unique else None, t.name)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def determinise(alphabet: Sequence[str], start: Hashable, step: Callable, final: Callable, epsilon: Callable,
                name_of: Callable, where: str) -> StateTable:
    """Subset construction: ``step(q, a)`` the set of successors of NFA state ``q`` on ``a``, ``epsilon(q)`` its
    epsilon successors, ``final(q)`` whether it accepts. States of the result are the reachable subsets, in
    breadth-first order from the epsilon closure of ``start``; a subset accepts iff it holds an accepting state.
    At most :data:`lrnnkit.limits.MAX_STATES` subsets (SizeLimitError past it)."""
    def closure(states) -> frozenset:
        seen = set(states)
        todo = list(states)
        while todo:
            for r in epsilon(todo.pop()):
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        return frozenset(seen)

    first = closure([start])
    index = {first: 0}
    order = [first]
    delta: list = []
    queue = deque([first])
    while queue:
        S = queue.popleft()
        row = []
        for a in alphabet:
            T = closure({r for q in S for r in step(q, a)})
            if T not in index:
                if len(order) >= limits.MAX_STATES:
                    raise SizeLimitError(f"{where}: determinising gives more than {limits.MAX_STATES} states "
                                         "(lrnnkit.limits.MAX_STATES)")
                index[T] = len(order)
                order.append(T)
                queue.append(T)
            row.append(index[T])
        delta.append(row)
    check_size(len(order), len(alphabet), where)
    names = ["{" + ", ".join(sorted(name_of(q) for q in S)) + "}" for S in order]
    accepting = {i for i, S in enumerate(order) if any(final(q) for q in S)}
    return StateTable(list(alphabet), names, 0, delta, accepting=accepting)
