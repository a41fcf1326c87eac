"""AALpy (``pip install aalpy``; ``aalpy.automata.Dfa``, ``aalpy.automata.MooreMachine``) <-> :class:`FSA`.

* :func:`from_aalpy`: a ``Dfa`` (acceptor: outputs ``"1"`` for accepting states, ``"0"`` else) or a
  ``MooreMachine`` (outputs ``str(state.output)``). Inputs are written as strings (``str``; AALpy's own DOT loader
  reads the input ``0`` as the integer 0, which becomes ``"0"`` again); the alphabet is AALpy's
  ``get_input_alphabet()`` order unless ``alphabet`` fixes it. States keep AALpy's list order, except that the
  initial state comes first; names are ``str(state_id)``. An input-incomplete machine (AALpy allows one) is
  completed only on request (:mod:`.table`).
* :func:`to_aalpy`: ``kind="dfa"`` (outputs must be ``"0"``/``"1"``), ``"moore"`` (any outputs), or
  ``"auto"`` (the default: ``dfa`` when the outputs are ``"0"``/``"1"``, else ``moore``). Inputs are the FSA's
  symbols (strings); state ids are the state names when AALpy's own file reader reads them back (words: letters,
  digits, underscores), else ``s0, s1, ...`` (:func:`aalpy_state_ids`), so that ``save_automaton_to_file`` then
  ``load_automaton_from_file`` gives the same machine.
"""
from __future__ import annotations

import re

from ...errors import InputError
from ..fsa import FSA
from .table import StateTable, check_size, to_fsa

__all__ = ["from_aalpy", "to_aalpy", "is_aalpy", "KINDS"]

KINDS = ("auto", "dfa", "moore")


def is_aalpy(obj) -> bool:
    """True for AALpy automata (checked by module name: AALpy need not be installed)."""
    return type(obj).__module__.startswith("aalpy.")


def from_aalpy(obj, *, complete: bool | str = False, alphabet=None, name: str = "") -> FSA:
    """The :class:`FSA` of an AALpy ``Dfa`` or ``MooreMachine`` (module docstring)."""
    kind = type(obj).__name__
    where = f"AALpy {kind}"
    if kind not in ("Dfa", "MooreMachine"):
        raise InputError(f"{where}: only Dfa and MooreMachine are supported (a Mealy machine's outputs sit on its "
                         "transitions, not its states)")
    states = list(obj.states)
    if obj.initial_state not in states:
        raise InputError(f"{where}: the initial state is not among the states")
    states.remove(obj.initial_state)
    states.insert(0, obj.initial_state)
    inputs = list(obj.get_input_alphabet())
    check_size(len(states), len(inputs), where)
    if alphabet is not None:
        alphabet = [str(a) for a in alphabet]
        if sorted(alphabet) != sorted(str(a) for a in inputs):
            raise InputError(f"{where}: alphabet {alphabet[:10]} is not a reordering of the inputs "
                             f"{[str(a) for a in inputs][:10]}")
        by_str = {str(a): a for a in inputs}
        inputs = [by_str[a] for a in alphabet]
    index = {id(s): i for i, s in enumerate(states)}
    delta = []
    for s in states:
        row = []
        for a in inputs:
            r = s.transitions.get(a)
            if r is not None and id(r) not in index:
                raise InputError(f"{where}: state {s.state_id!r} moves on {a!r} to a state outside the machine")
            row.append(None if r is None else index[id(r)])
        delta.append(row)
    names = [str(s.state_id) for s in states]
    if kind == "Dfa":
        t = StateTable([str(a) for a in inputs], names, 0, delta,
                       accepting={i for i, s in enumerate(states) if s.is_accepting}, name=name)
    else:
        t = StateTable([str(a) for a in inputs], names, 0, delta, outputs=[str(s.output) for s in states],
                       name=name)
    return to_fsa(t, where, complete)


# what AALpy's own DOT reader reads back as a node name: a DOT identifier pydot writes unquoted -- ASCII letters,
# digits and _ not starting with a digit, or a whole number (``0a`` or ``1e5`` come back quoted, and AALpy's reader
# fails on a quoted name)
_AALPY_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")


def aalpy_state_ids(fsa: FSA) -> list:
    """The state ids :func:`to_aalpy` gives: the FSA's state names when every one is a DOT identifier (ASCII
    letters, digits and underscores not starting with a digit, or a whole number -- what AALpy's DOT reader, ``aalpy.utils.load_automaton_from_file``, reads back after
    ``save_automaton_to_file``; it cannot parse a quoted node name such as ``"0-"`` or ``"S=0,+"``) and they are
    distinct, else ``s0, s1, ...`` for all of them (the names stay in lrnnkit's own formats)."""
    names = fsa.state_names
    if names is not None and len(set(names)) == fsa.n_states and all(_AALPY_ID.fullmatch(str(x)) for x in names):
        return [str(x) for x in names]
    return [f"s{q}" for q in range(fsa.n_states)]


def to_aalpy(fsa: FSA, kind: str = "auto"):
    """An AALpy ``Dfa`` or ``MooreMachine`` computing the outputs of ``fsa`` (module docstring)."""
    if kind not in KINDS:
        raise InputError(f"unknown AALpy kind {kind!r} (one of {', '.join(KINDS)})")
    binary = set(fsa.outputs) <= {"0", "1"}
    if kind == "auto":
        kind = "dfa" if binary else "moore"
    if kind == "dfa" and not binary:
        raise InputError(f"an AALpy Dfa holds accept / reject only, but {fsa.name or 'this automaton'} has outputs "
                         f"{sorted(set(fsa.outputs))[:6]}; use kind='moore'")
    try:
        from aalpy.automata import Dfa, DfaState, MooreMachine, MooreState
    except ImportError:
        raise InputError("this needs AALpy: pip install 'lrnnkit[interop]' (or pip install aalpy)") from None
    names = aalpy_state_ids(fsa)
    if kind == "dfa":
        states = [DfaState(names[q], fsa.outputs[q] == "1") for q in range(fsa.n_states)]
    else:
        states = [MooreState(names[q], fsa.outputs[q]) for q in range(fsa.n_states)]
    for q, s in enumerate(states):
        for a, sym in enumerate(fsa.alphabet):
            s.transitions[sym] = states[int(fsa.delta[q, a])]
    return (Dfa if kind == "dfa" else MooreMachine)(states[fsa.start], states)
