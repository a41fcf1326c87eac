"""The command line: discovery and error handling only. Contract: ``docs/cli.rst``.

Every other module of this package that does not start with ``_`` is one verb (or a family of verbs, as
``learn``: ``train`` and ``experiment``): it defines ``add_parser(sub)`` (its argparse parser), ``VERBS`` (verb ->
run function, ``run(args) -> exit status``) and ``ORDER`` (its place in ``lrnnkit --help``). They are found
automatically, as the constructions are; a new verb is one new file. Shared parser pieces are in ``_common``.

Exit statuses, the same for every verb (:data:`lrnnkit.errors.EXIT_STATUSES`): 0 success; 1 a negative answer (a
model not certified, a check that derives another verdict than the recorded one, a sweep with failed points, a
demo whose core step failed); 2 bad input (one line on stderr naming the problem and the input, a traceback only
with ``--debug``); 3 an internal error (a bug: one line, ``--debug`` for the traceback). Files are written
atomically (temporary file, then rename).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from .._version import __version__
from ..cli_format import escaped, escaping_terminal
from ..errors import EXIT_INTERNAL, InputError, Interrupted
from ..precision.commands import cast_argv
from . import __path__ as _PACKAGE_PATH
from ._common import _Parser

__all__ = ["main", "build_parser", "VERBS", "verb_modules"]

#: verb -> run function, filled from the verb modules the first time the parser is built (a verb already in it is
#: kept: a test may put its own there)
VERBS: dict = {}


def verb_modules() -> list:
    """The verb modules of this package (module docstring), in ``ORDER``."""
    mods = [importlib.import_module(f"{__package__}.{m.name}") for m in pkgutil.iter_modules(_PACKAGE_PATH)
            if not m.name.startswith("_") and m.name != "main"]
    return sorted(mods, key=lambda m: m.ORDER)


def build_parser():
    """The whole command line's parser: the global flags, then every verb module's ``add_parser``."""
    p = _Parser(prog="lrnnkit", description="Linear RNNs and finite automata: certified constructions, "
                "Krohn-Rhodes compilation, finite-precision simulation, Triton kernels.")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--version", action="version", version=f"lrnnkit {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for m in verb_modules():
        m.add_parser(sub)
        for verb, run in m.VERBS.items():
            VERBS.setdefault(verb, run)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --debug is global: accepted anywhere before a "--" (after the verb too), removed before parsing
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if debug:
        argv = [x for x in argv[:end] if x != "--debug"] + argv[end:]
    with escaping_terminal():
        return _main(argv, debug)


def _fail(text: str) -> None:
    """One error line on stderr, every control character escaped (newlines too: one line)."""
    print(escaped(text), file=sys.stderr)


def _main(argv: list, debug: bool) -> int:
    try:
        if argv[:2] == ["precision", "cast"]:   # values anywhere, negative ones too
            argv = cast_argv(argv)
        args = build_parser().parse_args(argv)
        return VERBS[args.cmd](args)
    except BrokenPipeError:
        # the reader closed the pipe (e.g. `lrnnkit theorems | head`): stop quietly, as Unix tools do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except InputError as exc:
        if debug:
            raise
        _fail(f"lrnnkit: error: {exc}")
        return 2
    except MemoryError:
        if debug:
            raise
        print("lrnnkit: error: out of memory (see `lrnnkit.limits` / docs \"Limits and errors\" for the size "
              "limits)", file=sys.stderr)
        return 2
    except OSError as exc:
        if debug:
            raise
        _fail(f"lrnnkit: error: {exc.strerror or exc or type(exc).__name__}"
              + (f": {exc.filename!r}" if getattr(exc, "filename", None) else ""))
        return 2
    except RecursionError:
        if debug:
            raise
        print("lrnnkit: error: input nested too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:      # lrnnkit.errors.Interrupted: the signal's status and what was saved
        if not isinstance(exc, Interrupted):
            print("lrnnkit: interrupted", file=sys.stderr)
        elif exc.message:
            _fail(exc.message)
        return getattr(exc, "exit_status", 130)
    except Exception as exc:  # noqa: BLE001  (no traceback without --debug, whatever went wrong)
        if debug:
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        _fail(f"lrnnkit: internal error: {type(exc).__name__}{': ' + msg if msg else ''} (run with --debug for "
              "the traceback, and please report it)")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
