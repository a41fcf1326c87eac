"""Optional dependencies: import one, or fail with one line that names the extra installing it.

lrnnkit's runtime dependencies (``pyproject.toml``) are the libraries its modules import on every path; a library
that only a few paths need is an extra instead, and those paths import it through :func:`require`, so that a
missing one is an :class:`~lrnnkit.errors.InputError` (exit status 2 on the command line, the install command in
the message) rather than a traceback.
"""
from __future__ import annotations

import importlib

from .errors import InputError

__all__ = ["require"]


def require(module: str, extra: str, purpose: str):
    """The imported ``module`` (e.g. ``"scipy.optimize"``), or InputError naming ``purpose`` and the command that
    installs ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise InputError(f"{purpose} needs {top}, which is not installed: pip install 'lrnnkit[{extra}]' "
                         f"(or pip install {top})") from None
