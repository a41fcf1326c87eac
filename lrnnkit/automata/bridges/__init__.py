"""Automata in and out: automata-lib, AALpy, Graphviz DOT and lrnnkit's JSON, each way (docs/interop.rst).

In: :func:`from_object` (an automata-lib ``DFA``/``NFA``, an AALpy ``Dfa``/``MooreMachine``, an FSA document
as a dict), :func:`load_file` (lrnnkit JSON, automata-lib keyword JSON, DOT). :func:`lrnnkit.load_source` and
:func:`lrnnkit.compile` take all of them. Out: :func:`dumps` / :func:`save` in :data:`FORMATS`, and the Python
objects :func:`to_automata_lib`, :func:`to_aalpy`, :func:`to_networkx`.

Partial automata (automata-lib's ``allow_partial``, AALpy's input-incomplete machines, DOT drawings that leave
transitions out) are completed with a named sink state only when asked (``complete=True`` or
``complete="NAME"``; :mod:`.table`).
"""
from __future__ import annotations

import json
import os

from ... import limits
from ...errors import InputError
from ..fsa import FSA
from .aalpy import from_aalpy, is_aalpy, to_aalpy
from .automata_lib import (from_automata_lib, from_automata_lib_dict, is_automata_lib, to_automata_lib,
                           to_automata_lib_dict)
from .dot import fsa_from_dot, fsa_to_dot, looks_like_dot
from .graph import from_networkx, from_permutation_group, is_networkx, is_permutation_group, to_networkx
from ...fileio import atomic_write_text
from ..io import fsa_from_dict, fsa_from_json, named_after_file, read_text

__all__ = ["from_object", "load_file", "dumps", "save", "FORMATS", "format_of_path", "from_automata_lib",
           "to_automata_lib", "from_aalpy", "to_aalpy", "fsa_from_dot", "fsa_to_dot", "to_networkx", "from_networkx",
           "from_permutation_group"]

#: ``json``: lrnnkit's FSA JSON (docs/fsa_format.rst); ``dot`` (alias ``aalpy``): Graphviz DOT in AALpy's dialect
#: (:mod:`.dot`); ``automata-lib``: automata-lib's DFA constructor keywords as JSON (:mod:`.automata_lib`).
FORMATS = ("json", "dot", "aalpy", "automata-lib")


def from_object(obj, *, complete: bool | str = False) -> FSA:
    """An :class:`FSA` from a Python object: an FSA (returned as is), an automata-lib DFA/NFA, an AALpy
    Dfa/MooreMachine, a networkx DiGraph / MultiDiGraph (:func:`from_networkx`), a sympy PermutationGroup (its word
    problem over its generators, :func:`from_permutation_group`), or a dict (an FSA document, or automata-lib
    keywords when it has ``input_symbols``)."""
    if isinstance(obj, FSA):
        return obj
    if is_automata_lib(obj):
        return from_automata_lib(obj, complete=complete)
    if is_aalpy(obj):
        return from_aalpy(obj, complete=complete)
    if is_networkx(obj):
        return from_networkx(obj, complete=complete)
    if is_permutation_group(obj):
        return from_permutation_group(obj)
    if isinstance(obj, dict):
        if "input_symbols" in obj:
            return from_automata_lib_dict(obj, complete=complete)
        return fsa_from_dict(obj, complete=complete)
    raise InputError(f"cannot read an automaton from a {type(obj).__module__}.{type(obj).__name__}; expected a "
                     "source string, an FSA, an automata-lib DFA/NFA, an AALpy Dfa/MooreMachine, a networkx "
                     "DiGraph, a sympy PermutationGroup or a dict")


def load_file(path, *, complete: bool | str = False) -> FSA:
    """An automaton file: DOT (extension ``.dot``/``.gv``, or text beginning with ``digraph``), automata-lib
    keyword JSON (an object with ``input_symbols``), else lrnnkit's FSA JSON (:func:`lrnnkit.automata.io.load_fsa`'s
    messages). Read bounded; the automaton is named after the file unless it has a name."""
    path = os.fspath(path)
    text = read_text(path)
    if os.path.splitext(path)[1].lower() in (".dot", ".gv") or looks_like_dot(text):
        return named_after_file(fsa_from_dot(text, path, complete=complete), path)
    head = text.lstrip()[:1]
    if head == "{" and '"input_symbols"' in text:
        try:
            d = json.loads(text, parse_int=limits.json_int)
        except (json.JSONDecodeError, RecursionError, ValueError):
            d = None
        if isinstance(d, dict) and "input_symbols" in d:
            return named_after_file(from_automata_lib_dict(d, path, complete=complete), path)
    return named_after_file(fsa_from_json(text, path, complete), path)


def format_of_path(path: str) -> str:
    """The output format a file name suggests: ``dot`` for ``.dot``/``.gv``, else ``json``."""
    return "dot" if os.path.splitext(os.fspath(path))[1].lower() in (".dot", ".gv") else "json"


def dumps(fsa: FSA, fmt: str = "json") -> str:
    """``fsa`` as text in ``fmt`` (:data:`FORMATS`), ending with a newline."""
    if fmt == "json":
        return json.dumps(fsa.to_dict(), indent=1) + "\n"
    if fmt in ("dot", "aalpy"):
        return fsa_to_dot(fsa)
    if fmt == "automata-lib":
        return json.dumps(to_automata_lib_dict(fsa), indent=1) + "\n"
    raise InputError(f"unknown automaton format {fmt!r} (one of {', '.join(FORMATS)})")


def save(fsa: FSA, path, fmt: str | None = None) -> str:
    """Write ``dumps(fsa, fmt)`` to ``path`` atomically (``fmt`` defaults to :func:`format_of_path`); returns
    the format written."""
    fmt = fmt or format_of_path(path)
    atomic_write_text(path, dumps(fsa, fmt))
    return fmt
