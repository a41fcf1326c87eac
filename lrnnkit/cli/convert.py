"""``lrnnkit convert SOURCE --to FORMAT [-o FILE]`` and the ``--complete [--sink NAME]`` flags (docs/cli.rst,
docs/interop.rst); hooked into :mod:`lrnnkit.cli`."""
from __future__ import annotations

import json
import sys
from ..automata.bridges import FORMATS
from ..automata.bridges import dumps
from ..errors import InputError
from ..fileio import atomic_write_text
from ..automata.sources import load_source

ORDER = 120

__all__ = ["add_parser", "add_complete_flags", "complete_of", "run"]


def add_complete_flags(s) -> None:
    """``--complete`` and ``--sink NAME`` on a verb that reads a SOURCE."""
    s.add_argument("--complete", action="store_true", help="complete a partial automaton (missing transitions) "
                   "with a new sink state; without it a partial automaton is refused")
    s.add_argument("--sink", default=None, metavar="NAME", help="name of the sink state added by --complete "
                   "(default: sink)")


def complete_of(a):
    """The ``complete`` argument of :func:`lrnnkit.load_source` for parsed flags."""
    if a.sink is not None and not a.complete:
        raise InputError("--sink names the state added by --complete; give --complete too")
    return (a.sink or True) if a.complete else False


def add_parser(sub) -> None:
    s = sub.add_parser("convert", help="write an automaton in another format (lrnnkit JSON, DOT, AALpy, "
                       "automata-lib)")
    s.add_argument("source", help="FSA JSON file, DOT file, automata-lib keyword JSON, or preset (as for `info`)")
    s.add_argument("--to", required=True, choices=FORMATS, dest="fmt",
                   help="json: lrnnkit's FSA JSON; dot: Graphviz DOT that AALpy's load_automaton_from_file also "
                   "reads (aalpy: the same); automata-lib: automata-lib's DFA keywords as JSON")
    s.add_argument("-o", "--output", help="file to write (default: stdout)")
    add_complete_flags(s)
    s.add_argument("--json", action="store_true", help="with -o: print a JSON summary")


def run(a) -> int:
    fsa = load_source(a.source, complete=complete_of(a))
    text = dumps(fsa, a.fmt)
    if not a.output:
        sys.stdout.write(text)
        return 0
    atomic_write_text(a.output, text)
    summary = {"output": a.output, "format": a.fmt, "states": fsa.n_states, "alphabet": list(fsa.alphabet)}
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"wrote {a.output}: {a.fmt}, {fsa.n_states} states, {fsa.n_letters} letters")
    return 0


VERBS = {"convert": run}
