"""The command line (``lrnnkit VERB ...``, ``python -m lrnnkit``): :mod:`lrnnkit.cli.main` finds the verbs and turns
every error into one line and an exit status; each other module is one verb with its parser and its run function
(:mod:`lrnnkit.cli.main` says how a verb module looks). Contract: ``docs/cli.rst``."""
from .main import VERBS, build_parser, main

__all__ = ["main", "build_parser", "VERBS"]
