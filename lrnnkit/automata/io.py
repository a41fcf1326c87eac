"""FSA files: ``load_fsa(path)``, ``save_fsa(fsa, path)``, and the dict forms behind them.

Format ``lrnnkit.fsa``, version 1 (what :meth:`FSA.to_dict` writes; ``save_fsa`` writes exactly this)::

    {
      "format": "lrnnkit.fsa",          # optional on input; if present must be this string
      "version": 1,                     # optional on input; if present must be 1
      "name": "parity",                 # optional
      "alphabet": ["0", "1"],           # non-empty list of distinct non-empty strings without white space
      "states": 2,                      # optional: number of states (checked against delta)
      "start": 0,                       # optional, default 0 (an index, or a state name, see state_names)
      "delta": [[0, 1], [1, 0]],        # delta[q][a] = next state (row per state, column per alphabet symbol)
      "accepting": [1],                 # optional: accepting states (outputs "1"/"0")
      "labels": ["even", "odd"],        # optional: output label per state (overrides accepting)
      "state_names": ["even", "odd"]    # optional: a readable name per state
    }

Friendlier form accepted on input: ``delta`` as an object ``{"state": {"symbol": target}}``, where a state is an
index written as a string (``"0"``) or a name from ``state_names``, and a target is an index or a state name. Every
state needs a transition on every symbol (the automaton must be complete and deterministic; a missing one is
completed with a sink state only on request: ``complete=True``, command line ``--complete``); a target given as a
list of several states, or a state/symbol key repeated in the file, is rejected as nondeterministic.

Every problem raises :class:`InputError` naming the problem and the file: malformed JSON (with line and column),
wrong types, empty alphabet, unknown symbols, missing or nondeterministic transitions, targets out of range,
unknown keys. Saving is atomic (temporary file in the same directory, then ``os.replace``).
"""
from __future__ import annotations

import json
import os

from .. import limits
from ..errors import InputError, SizeLimitError
from .fsa import FSA
from ..fileio import atomic_write_text

__all__ = ["load_fsa", "save_fsa", "fsa_from_dict", "fsa_from_json", "read_text", "named_after_file", "FORMAT",
           "VERSION"]

FORMAT = "lrnnkit.fsa"
VERSION = 1
_KEYS = {"format", "version", "name", "alphabet", "states", "start", "delta", "accepting", "labels", "state_names"}


def _pairs_hook(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise _DuplicateKey(k, {key for key, _ in pairs})
        d[k] = v
    return d


class _DuplicateKey(Exception):
    def __init__(self, key, keys):
        self.key, self.keys = key, keys


def fsa_from_json(text: str, where: str = "<string>", complete: bool | str = False) -> FSA:
    """Parse FSA JSON text; ``where`` names the input in error messages; ``complete``: as for
    :func:`fsa_from_dict`."""
    try:
        data = json.loads(text, object_pairs_hook=_pairs_hook, parse_int=limits.json_int)
    except RecursionError:
        raise InputError(f"{where}: the JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:   # an integer literal past limits.json_int's bound, or Python's own
        raise (type(exc) if isinstance(exc, InputError) else InputError)(f"{where}: {exc}") from None
    except _DuplicateKey as exc:
        top = exc.keys <= _KEYS      # the file's own fields, not a transition table's symbols or states
        raise InputError(f"{where}: key {limits.shorten(exc.key, 40)} appears twice in one JSON object"
                         + (" (JSON keeps only one of the two: write it once)" if top else
                            " (in a transition table: two targets for one state and symbol, a nondeterministic "
                            "automaton)")) from None
    return fsa_from_dict(data, where, complete)


_HOW = ("; pass complete=True (command line: --complete) to send missing transitions to a new sink state named "
        "'sink'")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def fsa_from_dict(data, where: str = "<dict>", complete: bool | str = False) -> FSA:
    """Validate a decoded FSA document (either delta form) and build the :class:`FSA`. A missing transition
    (``null`` in a row, or a symbol left out of the object form) is refused unless ``complete`` asks for a sink
    state (:mod:`lrnnkit.automata.bridges.table`)."""
    def fail(msg):
        raise InputError(f"{where}: {msg}")

    if not isinstance(data, dict):
        fail(f"expected a JSON object with keys alphabet, delta, ..., got {type(data).__name__}")
    if "format" in data and data["format"] != FORMAT:
        fail(f"format is {data['format']!r}, expected {FORMAT!r} (is this an automaton file?)")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        fail(f"unknown keys {unknown}; allowed: {sorted(_KEYS)}")
    if "version" in data and data["version"] != VERSION:
        fail(f"unsupported version {data['version']!r} (this lrnnkit reads version {VERSION})")
    for key in ("alphabet", "delta"):
        if key not in data:
            fail(f"missing key {key!r}")
    alphabet = data["alphabet"]
    if not isinstance(alphabet, list):
        fail(f"alphabet must be a list of strings, got {type(alphabet).__name__}")
    if not alphabet:
        fail("empty alphabet: an automaton needs at least one input symbol")
    for s in alphabet:
        if not isinstance(s, str):
            fail(f"alphabet symbols must be strings, got {s!r} ({type(s).__name__})")
    delta = data["delta"]
    if isinstance(delta, (list, dict)):   # sizes first, before any per-transition work (lrnnkit.limits)
        n0, k0 = len(delta), len(alphabet)
        if k0 > limits.MAX_LETTERS or n0 > limits.MAX_STATES or n0 * k0 > limits.MAX_TRANSITIONS:
            raise SizeLimitError(f"{where}: {n0} states x {k0} letters = {n0 * k0} transitions; automata have at "
                                 f"most {limits.MAX_STATES} states, {limits.MAX_LETTERS} letters and "
                                 f"{limits.MAX_TRANSITIONS} transitions (lrnnkit.limits.MAX_STATES / MAX_LETTERS / "
                                 f"MAX_TRANSITIONS)")
    name = data.get("name", "")
    if not isinstance(name, str):
        fail(f"name must be a string, got {name!r}")
    names = data.get("state_names")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            fail(f"state_names must be a list of strings, got {names!r}")
        if len(set(names)) != len(names):
            fail(f"state_names contain duplicates: {sorted({x for x in names if names.count(x) > 1})}")
    delta = data["delta"]
    if isinstance(delta, dict):
        delta, n = _delta_from_mapping(delta, alphabet, names, fail, complete)
    elif isinstance(delta, list):
        n = len(delta)
        if n == 0:
            fail("delta is empty: an automaton needs at least one state")
        for q, row in enumerate(delta):
            if not isinstance(row, list):
                fail(f"delta[{q}] must be a list with one target per symbol, got {row!r}")
            if len(row) != len(alphabet):
                fail(f"delta[{q}] has {len(row)} targets for {len(alphabet)} symbols {alphabet[:10]}"
                     + (" (missing transitions)" if len(row) < len(alphabet) else ""))
            for a, t in enumerate(row):
                if isinstance(t, list):
                    fail(f"state {q} has {len(t)} targets {t} on symbol {alphabet[a]!r}: nondeterministic")
                if t is None:
                    if complete:
                        continue
                    fail(f"missing transition from state {q} on symbol {alphabet[a]!r}{_HOW}")
                if not _is_int(t):
                    fail(f"delta[{q}][{a}] (symbol {alphabet[a]!r}) is {t!r}, not a state index")
                if not 0 <= t < n:
                    fail(f"delta[{q}][{a}] (symbol {alphabet[a]!r}) = {t} is out of range 0..{n - 1}")
    else:
        fail(f"delta must be a list of rows or an object {{state: {{symbol: target}}}}, got {type(delta).__name__}")
    if "states" in data:
        if not _is_int(data["states"]):
            fail(f"states must be an integer, got {data['states']!r}")
        if data["states"] != n:
            fail(f"states = {data['states']} but delta describes {n} states")
    if names is not None and len(names) != n:
        fail(f"{len(names)} state_names for {n} states")
    start = data.get("start", 0)
    if isinstance(start, str) and names is not None and start in names:
        start = names.index(start)
    if not _is_int(start):
        fail(f"start must be a state index{' or name' if names else ''}, got {start!r}")
    if not 0 <= start < n:
        fail(f"start state {start} out of range 0..{n - 1}")
    accepting = data.get("accepting")
    if accepting is not None:
        if not isinstance(accepting, list):
            fail(f"accepting must be a list of states, got {accepting!r}")
        acc = []
        for q in accepting:
            if isinstance(q, str) and names is not None and q in names:
                q = names.index(q)
            if not _is_int(q) or not 0 <= q < n:
                fail(f"accepting state {q!r} is not a state (0..{n - 1})")
            acc.append(q)
        accepting = acc
    labels = data.get("labels")
    if labels is not None:
        if not isinstance(labels, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                   for x in labels):
            fail(f"labels must be a list of strings, got {labels!r}")
        if len(labels) != n:
            fail(f"{len(labels)} labels for {n} states")
    if complete and any(t is None for row in delta for t in row):
        from .bridges.table import StateTable, to_fsa
        outputs = ([str(x) for x in labels] if labels else None if accepting is not None
                   else [str(q) for q in range(n)])
        return to_fsa(StateTable(list(alphabet), list(names) if names is not None else [str(q) for q in range(n)],
                                 start, delta, accepting=None if outputs else set(accepting), outputs=outputs,
                                 name=name), where, complete)
    try:
        return FSA(tuple(alphabet), delta, start, accepting, tuple(str(x) for x in labels) if labels else None,
                   tuple(names) if names is not None else None, name)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _delta_from_mapping(delta: dict, alphabet: list, names, fail, complete=False):
    sym = {s: i for i, s in enumerate(alphabet)}
    keys = list(delta)
    n = len(keys)
    if n == 0:
        fail("delta is empty: an automaton needs at least one state")
    if names is not None:
        n = len(names)

    def state_of(x, what):
        if names is not None and isinstance(x, str) and x in names:
            return names.index(x)
        if isinstance(x, str) and x.isdigit():
            x = int(x)
        if not _is_int(x):
            fail(f"{what} {x!r} is not a state index{' or name' if names else ''}")
        if not 0 <= x < n:
            fail(f"{what} {x} is out of range 0..{n - 1}")
        return x

    table = [[None] * len(alphabet) for _ in range(n)]
    seen = set()
    for k, row in delta.items():
        q = state_of(k, "state")
        if q in seen:
            fail(f"state {k!r} has two rows in delta (nondeterministic)")
        seen.add(q)
        if not isinstance(row, dict):
            fail(f"delta[{k!r}] must be an object {{symbol: target}}, got {row!r}")
        for s, t in row.items():
            if s not in sym:
                fail(f"unknown symbol {s!r} in delta[{k!r}]; the alphabet is {alphabet[:20]}")
            if isinstance(t, list):
                if len(t) == 1:
                    t = t[0]
                else:
                    fail(f"state {k!r} has {len(t)} targets {t} on symbol {s!r}: nondeterministic")
            table[q][sym[s]] = state_of(t, f"target of state {k!r} on {s!r}")
    for q in range(n):
        for a in range(len(alphabet)):
            if table[q][a] is None and not complete:
                label = names[q] if names is not None else q
                fail(f"missing transition from state {label!r} on symbol {alphabet[a]!r}{_HOW}")
    return table, n


def read_text(path) -> str:
    """The text of an automaton file, read bounded (:data:`lrnnkit.limits.MAX_FILE_BYTES`); InputError naming
    ``path`` when it is missing, a directory, empty or not UTF-8."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(f"no such file: {path!r}")
    if os.path.isdir(path):
        raise InputError(f"{path!r} is a directory, not an FSA JSON file")
    raw = limits.read_bounded(path, limits.MAX_FILE_BYTES, "FSA file", "MAX_FILE_BYTES")
    if not raw.strip():
        raise InputError(f"{path}: the file is empty (expected an FSA JSON object)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def named_after_file(fsa: FSA, path) -> FSA:
    """``fsa``, named after the file ``path`` when it has no name of its own."""
    if fsa.name:
        return fsa
    return FSA(fsa.alphabet, fsa.delta, fsa.start, fsa.accepting, fsa.labels, fsa.state_names,
               os.path.splitext(os.path.basename(os.fspath(path)))[0])


def load_fsa(path) -> FSA:
    """Read an FSA JSON file (module docstring). Every problem is an :class:`InputError` naming ``path``."""
    path = os.fspath(path)
    return named_after_file(fsa_from_json(read_text(path), path), path)


def save_fsa(fsa: FSA, path) -> None:
    """Write ``fsa.to_dict()`` as JSON, atomically (temporary file in the same directory, then rename)."""
    atomic_write_text(path, json.dumps(fsa.to_dict(), indent=1) + "\n")
