"""Deprecated for one release: the command line's parser is :func:`lrnnkit.cli.build_parser` (each verb's parser
lives with the verb in :mod:`lrnnkit.cli`)."""
import warnings

from .cli.main import build_parser

__all__ = ["build_parser"]

warnings.warn("lrnnkit.parser is deprecated: use lrnnkit.cli.build_parser", DeprecationWarning, stacklevel=2)
