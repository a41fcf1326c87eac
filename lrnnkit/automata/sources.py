"""``load_source(SOURCE) -> FSA``: the SOURCE grammar of the command line (docs/cli.rst, docs/fsa_format.rst).

SOURCE is one of

==============================  =======================================================================
``parity``                      parity of a bit string (:func:`builders.parity`)
``counter:M``                   counting mod M on one letter (:func:`builders.counter`)
``group:NAME``                  word problem of a named group: ``Z<m>``, ``D<m>``, ``S<n>``, ``A<n>``,
                                products ``A4xZ5`` (:func:`groups.group_word_problem`)
``flipflop``                    the flip-flop (:func:`builders.flipflop`)
``even-pairs`` [``:M``]         first symbol == last symbol (:func:`builders.even_pairs`, default M = 2)
``cycle-nav:M``                 navigation on a cycle of length M (:func:`builders.cycle_nav`)
``mod-arith:M``                 arithmetic mod M with precedence, no brackets (:func:`builders.mod_arith`)
``regex:PATTERN``               full-match DFA of a regular expression (:func:`builders.from_regex`)
``transformations:[[..],..]``   generators as 0-based image lists (:func:`builders.from_transformations`)
a path                          an FSA JSON file (:func:`io.load_fsa`), a Graphviz DOT file or automata-lib
                                keyword JSON (:func:`bridges.load_file`)
==============================  =======================================================================

**Presets win.** A SOURCE is a preset when it is one of the bare names ``parity``, ``flipflop``, ``even-pairs``
or starts with a preset's name and a colon (``counter:``, ``regex:``, ...), whatever files exist: a file or
directory named ``flipflop`` in the working directory never replaces the preset (``train parity --out parity``
leaves a directory ``parity`` that later commands must not read). Everything else is a path; to read a file whose
name looks like a preset, write it as a path: ``./flipflop``. Unknown presets, bad moduli and malformed
specifications raise :class:`InputError` naming the source.
"""
from __future__ import annotations

import os

from ..errors import InputError
from . import builders
from .fsa import FSA
from ..errors import SizeLimitError
from .. import limits
from .bridges import from_object, load_file
from .groups import group_word_problem

__all__ = ["load_source", "is_preset", "PRESETS"]

PRESETS = ("parity", "counter:M", "group:NAME", "flipflop", "even-pairs", "cycle-nav:M", "mod-arith:M",
           "regex:PATTERN", "transformations:[[...],...]")


def _modulus(source: str, arg: str) -> int:
    try:
        if not arg.strip().lstrip("+").isdigit():
            raise ValueError
        return int(arg)
    except ValueError:
        raise InputError(f"bad modulus {arg!r} in source {source!r}: expected a positive integer, "
                         f"e.g. {source.split(':')[0]}:5") from None


_BARE = ("parity", "flipflop", "even-pairs")
_HEADS = ("counter", "cycle-nav", "mod-arith", "even-pairs", "group", "regex", "transformations", "parity",
          "flipflop")


def is_preset(source: str) -> bool:
    """Whether ``source`` names a preset (see "Presets win" in the module docstring)."""
    head, sep, _ = source.partition(":")
    return source in _BARE or (bool(sep) and head in _HEADS)


def load_source(source, *, complete: bool | str = False) -> FSA:
    """The automaton named by ``source`` (see the module docstring), or read from a Python object (an automata-lib
    DFA/NFA, an AALpy Dfa/MooreMachine, a dict; :func:`lrnnkit.automata.bridges.from_object`). ``complete``:
    complete a partial automaton with a sink state (:mod:`lrnnkit.automata.bridges.table`)."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        return from_object(source, complete=complete)
    if not source.strip():
        raise InputError(f"empty source {source!r}; expected a path to an FSA JSON file or one of {', '.join(PRESETS)}")
    head, sep, arg = source.partition(":")
    if not is_preset(source):
        if os.path.lexists(source) or os.sep in source or (os.altsep or os.sep) in source \
                or source.endswith((".json", ".dot", ".gv")):
            return load_file(source, complete=complete)
    if not sep:
        if source == "parity":
            return builders.parity()
        if source == "flipflop":
            return builders.flipflop()
        if source == "even-pairs":
            return builders.even_pairs()
        if source in ("counter", "cycle-nav", "mod-arith", "group", "regex", "transformations"):
            raise InputError(f"source {source!r} needs an argument: {source}:{'NAME' if source == 'group' else 'M'}")
        if source.endswith((".json", ".dot", ".gv")) or os.sep in source:
            raise InputError(f"no such file: {source!r}")
        raise InputError(f"unknown source {source!r}: not a file and not a preset "
                         f"(presets: {', '.join(PRESETS)})")
    if head == "counter":
        return builders.counter(_modulus(source, arg))
    if head == "cycle-nav":
        return builders.cycle_nav(_modulus(source, arg))
    if head == "mod-arith":
        return builders.mod_arith(_modulus(source, arg))
    if head == "even-pairs":
        return builders.even_pairs(_modulus(source, arg))
    if head == "group":
        return group_word_problem(arg.strip())
    if head == "regex":
        if len(arg) > limits.MAX_REGEX_CHARS:
            raise SizeLimitError(f"regex of {len(arg)} characters; at most {limits.MAX_REGEX_CHARS} "
                                 "(lrnnkit.limits.MAX_REGEX_CHARS)")
        return builders.from_regex(arg)
    if head == "transformations":
        return builders.from_transformations(arg)
    if head in ("parity", "flipflop"):
        raise InputError(f"source {head!r} takes no argument, got {source!r}")
    raise InputError(f"unknown preset {head!r} in source {source!r} (presets: {', '.join(PRESETS)}; "
                     f"or give a path to an FSA JSON file)")
