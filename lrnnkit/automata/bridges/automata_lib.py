"""automata-lib (``pip install automata-lib``; ``automata.fa.dfa.DFA``, ``automata.fa.nfa.NFA``) <-> :class:`FSA`.

* :func:`from_automata_lib`: a ``DFA`` (complete, or partial with ``allow_partial=True``: completed only on
  request, :mod:`.table`) or an ``NFA`` (determinised by the subset construction, epsilon transitions -- the
  symbol ``""`` -- included). The alphabet is ``sorted(input_symbols)`` unless ``alphabet`` fixes the order; the
  states are numbered breadth-first from the initial state (letters in alphabet order), then the unreachable ones
  by name, so the result does not depend on set iteration order. State names are written as automata-lib draws
  them (``{q0, q1}`` for a frozenset, ``(q0, q1)`` for a tuple; members sorted).
* :func:`to_automata_lib`: the ``DFA`` of an automaton whose outputs are ``"0"``/``"1"`` (an acceptor: final
  states = output ``"1"``); other outputs have no DFA form (use AALpy's Moore machines, :mod:`.aalpy`).
  States are the FSA's state names (else ``q0, q1, ...``).
* :func:`to_automata_lib_dict` / :func:`from_automata_lib_dict`: the same as JSON-able constructor keywords
  (automata-lib has no file format of its own): ``{"automaton": "DFA" | "NFA", "states", "input_symbols",
  "transitions", "initial_state", "final_states"}`` with lists for sets; ``DFA(**d)`` after turning the three
  lists ``states``, ``input_symbols``, ``final_states`` into sets (and NFA targets into sets):
  :func:`automata_lib_keywords`. The field names are automata-lib's own, both ways: an automaton's
  ``input_parameters`` (sets, frozendicts, states of any type) read by :func:`from_automata_lib_dict` as they are.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from ...errors import InputError
from ..fsa import FSA
from .table import StateTable, check_size, determinise, to_fsa

__all__ = ["from_automata_lib", "to_automata_lib", "to_automata_lib_dict", "from_automata_lib_dict",
           "automata_lib_keywords", "is_automata_lib"]


def _lib():
    try:
        from automata.fa.dfa import DFA
        from automata.fa.nfa import NFA
    except ImportError:
        raise InputError("this needs automata-lib: pip install 'lrnnkit[interop]' (or pip install automata-lib)") \
            from None
    return DFA, NFA


def is_automata_lib(obj) -> bool:
    """True for automata-lib finite automata (checked by module name: automata-lib need not be installed)."""
    return type(obj).__module__.startswith("automata.fa.")


def state_name(s) -> str:
    """automata-lib's way of writing a state: strings as they are, frozensets ``{a, b}`` (sorted), tuples
    ``(a, b)``, anything else ``str``."""
    if isinstance(s, str):
        return s
    if isinstance(s, frozenset):
        return "{" + ", ".join(sorted(state_name(x) for x in s)) + "}"
    if isinstance(s, tuple):
        return "(" + ", ".join(state_name(x) for x in s) + ")"
    return str(s)


def _alphabet(symbols, alphabet, where: str) -> list:
    syms = [s for s in symbols if s != ""]
    for s in syms:
        if not isinstance(s, str):
            raise InputError(f"{where}: input symbol {s!r} is not a string")
    if alphabet is None:
        return sorted(syms)
    alphabet = [str(a) for a in alphabet]
    if sorted(alphabet) != sorted(syms):
        raise InputError(f"{where}: alphabet {alphabet[:10]} is not a reordering of the input symbols "
                         f"{sorted(syms)[:10]}")
    return alphabet


def _order(states, initial, succ, alphabet) -> list:
    """Breadth-first from ``initial``, then the unreachable states by name."""
    seen = {initial}
    order = [initial]
    queue = deque([initial])
    while queue:
        q = queue.popleft()
        for a in alphabet:
            for r in succ(q, a):
                if r not in seen:
                    seen.add(r)
                    order.append(r)
                    queue.append(r)
    rest = sorted((s for s in states if s not in seen), key=state_name)
    return order + rest


def from_automata_lib(obj, *, complete: bool | str = False, alphabet=None, name: str = "") -> FSA:
    """The :class:`FSA` of an automata-lib ``DFA`` or ``NFA`` (module docstring)."""
    where = f"automata-lib {type(obj).__name__}"
    kind = type(obj).__name__
    if kind not in ("DFA", "NFA"):
        raise InputError(f"{where}: only DFA and NFA are supported (got {kind}; convert it to an NFA first)")
    states, trans = obj.states, obj.transitions
    check_size(len(states), len(obj.input_symbols), where)
    sigma = _alphabet(obj.input_symbols, alphabet, where)
    if kind == "NFA":
        t = determinise(sigma, obj.initial_state, lambda q, a: trans.get(q, {}).get(a, ()),
                        lambda q: q in obj.final_states, lambda q: trans.get(q, {}).get("", ()), state_name, where)
        t.name = name
        return to_fsa(t, where, complete)

    def succ(q, a):
        r = trans.get(q, {}).get(a)
        return () if r is None else (r,)

    order = _order(states, obj.initial_state, succ, sigma)
    index = {q: i for i, q in enumerate(order)}
    delta = [[None if trans.get(q, {}).get(a) is None else index[trans[q][a]] for a in sigma] for q in order]
    t = StateTable(sigma, [state_name(q) for q in order], 0, delta,
                   accepting={index[q] for q in obj.final_states}, name=name)
    return to_fsa(t, where, complete)


def _acceptor(fsa: FSA, what: str) -> set:
    outs = set(fsa.outputs)
    if not outs <= {"0", "1"}:
        raise InputError(f"{what} holds accept / reject only, but {fsa.name or 'this automaton'} has outputs "
                         f"{sorted(outs)[:6]}{' ...' if len(outs) > 6 else ''}; write it as an AALpy Moore machine "
                         "(--to aalpy), DOT or lrnnkit JSON instead")
    return {q for q in range(fsa.n_states) if fsa.outputs[q] == "1"}


def _names(fsa: FSA) -> list:
    if fsa.state_names is not None and len(set(fsa.state_names)) == fsa.n_states:
        return list(fsa.state_names)
    return [f"q{q}" for q in range(fsa.n_states)]


def to_automata_lib_dict(fsa: FSA) -> dict:
    """The JSON-able constructor keywords of :func:`to_automata_lib` (module docstring)."""
    acc = _acceptor(fsa, "an automata-lib DFA")
    names = _names(fsa)
    return {"automaton": "DFA", "states": names, "input_symbols": list(fsa.alphabet),
            "transitions": {names[q]: {s: names[int(fsa.delta[q, a])] for a, s in enumerate(fsa.alphabet)}
                            for q in range(fsa.n_states)},
            "initial_state": names[fsa.start], "final_states": [names[q] for q in sorted(acc)]}


def automata_lib_keywords(d: dict) -> dict:
    """The keyword arguments of automata-lib's own constructor for the JSON form ``d`` (:func:`to_automata_lib_dict`
    or a file of it): the same field names, sets where automata-lib takes sets (``states``, ``input_symbols``,
    ``final_states``, NFA targets); ``DFA(**automata_lib_keywords(d))`` (or ``NFA(...)`` for ``"automaton":
    "NFA"``). The other way, :func:`from_automata_lib_dict` reads an automaton's own ``input_parameters``."""
    nfa = d.get("automaton", "DFA") == "NFA"
    out = {"states": set(d["states"]), "input_symbols": set(d["input_symbols"]),
           "transitions": {q: {a: (set(r) if nfa else r) for a, r in row.items()} for q, row in d["transitions"].items()},
           "initial_state": d["initial_state"], "final_states": set(d["final_states"])}
    if "allow_partial" in d and not nfa:
        out["allow_partial"] = d["allow_partial"]
    return out


def to_automata_lib(fsa: FSA):
    """An automata-lib ``DFA`` with the language of ``fsa`` (outputs must be ``"0"``/``"1"``)."""
    DFA, _ = _lib()
    return DFA(**automata_lib_keywords(to_automata_lib_dict(fsa)))


def _plain(d: dict) -> dict:
    """``d`` with automata-lib's in-memory types (sets, frozensets, frozendicts, tuples; states of any hashable
    type, written as :func:`state_name` writes them) turned into the JSON form's lists, strings and dicts: an
    automaton's ``input_parameters`` read like a file. ``automaton`` is inferred (NFA when a target is a set)
    when absent."""
    if "automaton" in d or not isinstance(d.get("transitions"), Mapping):
        return d
    sets = (set, frozenset, list, tuple)
    nfa = any(isinstance(r, (set, frozenset)) for row in d["transitions"].values() if isinstance(row, Mapping)
              for r in row.values())
    def names(xs):
        return sorted(state_name(x) for x in xs) if isinstance(xs, sets) else xs
    out = {k: v for k, v in d.items()}
    out.update(automaton="NFA" if nfa else "DFA", states=names(d.get("states")),
               input_symbols=sorted(d["input_symbols"]) if isinstance(d.get("input_symbols"), sets)
               else d.get("input_symbols"),
               final_states=names(d.get("final_states")),
               transitions={state_name(q): ({a: (names(r) if nfa else state_name(r)) for a, r in row.items()}
                                            if isinstance(row, Mapping) else row)
                            for q, row in d["transitions"].items()})
    if "initial_state" in d:
        out["initial_state"] = state_name(d["initial_state"])
    if nfa:
        out.pop("allow_partial", None)
    return out


def from_automata_lib_dict(d, where: str = "<automata-lib dict>", *, complete: bool | str = False,
                           name: str = "") -> FSA:
    """Read :func:`to_automata_lib_dict`'s form (an NFA when ``automaton`` is ``"NFA"``), without automata-lib; or an
    automata-lib automaton's own ``input_parameters`` (its field names, with sets and frozendicts)."""
    if isinstance(d, Mapping) and not isinstance(d, dict):
        d = dict(d)
    if not isinstance(d, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(d).__name__}")
    d = _plain(d)
    kind = d.get("automaton", "DFA")
    if kind not in ("DFA", "NFA"):
        raise InputError(f"{where}: automaton must be 'DFA' or 'NFA', got {kind!r}")
    for key in ("states", "input_symbols", "transitions", "initial_state", "final_states"):
        if key not in d:
            raise InputError(f"{where}: missing key {key!r}")
    unknown = sorted(set(d) - {"automaton", "states", "input_symbols", "transitions", "initial_state",
                               "final_states", "allow_partial"})
    if unknown:
        raise InputError(f"{where}: unknown keys {unknown}")
    states, symbols, trans, final = d["states"], d["input_symbols"], d["transitions"], d["final_states"]
    if not (isinstance(states, list) and all(isinstance(s, str) for s in states)):
        raise InputError(f"{where}: states must be a list of strings")
    if not (isinstance(symbols, list) and all(isinstance(s, str) for s in symbols)):
        raise InputError(f"{where}: input_symbols must be a list of strings")
    if not (isinstance(final, list) and all(s in states for s in final)):
        raise InputError(f"{where}: final_states must be a list of states")
    if d["initial_state"] not in states:
        raise InputError(f"{where}: initial_state {d['initial_state']!r} is not a state")
    if not isinstance(trans, dict):
        raise InputError(f"{where}: transitions must be an object {{state: {{symbol: target}}}}")
    check_size(len(states), len(symbols), where)
    known = set(states)
    for q, row in trans.items():
        if q not in known or not isinstance(row, dict):
            raise InputError(f"{where}: transitions[{q!r}]: not a state, or not an object {{symbol: target}}")
        for a, r in row.items():
            if a not in symbols and not (kind == "NFA" and a == ""):
                raise InputError(f"{where}: unknown symbol {a!r} in transitions[{q!r}]")
            targets = r if kind == "NFA" else [r]
            if kind == "NFA" and not isinstance(r, list):
                raise InputError(f"{where}: NFA targets must be lists of states, got {r!r}")
            if not all(isinstance(x, str) and x in known for x in targets):
                raise InputError(f"{where}: transitions[{q!r}][{a!r}] = {r!r} is not a state")
    sigma = sorted(symbols)
    if kind == "NFA":
        t = determinise(sigma, d["initial_state"], lambda q, a: trans.get(q, {}).get(a, ()),
                        lambda q: q in final, lambda q: trans.get(q, {}).get("", ()), str, where)
        t.name = name
        return to_fsa(t, where, complete)
    order = _order(states, d["initial_state"],
                   lambda q, a: (trans[q][a],) if a in trans.get(q, {}) else (), sigma)
    index = {q: i for i, q in enumerate(order)}
    delta = [[index[trans[q][a]] if a in trans.get(q, {}) else None for a in sigma] for q in order]
    return to_fsa(StateTable(sigma, order, 0, delta, accepting={index[q] for q in final}, name=name), where,
                  complete)
