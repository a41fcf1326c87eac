"""Imports every construction module so each registers itself. A module that fails to import is a bug: the error
propagates (no silent skipping).

:func:`load_all` is handed to the registry by the package (``registry.add_loader``) rather than imported by the
registry, so that imports flow one way: construction modules -> registry, package -> registry and this module.
"""
import importlib
import os
import pkgutil

__all__ = ["load_all"]


def load_all() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(m.name for m in pkgutil.iter_modules([here])):
        if name not in ("registry",) and not name.startswith("_"):
            importlib.import_module(f"{__package__}.{name}")
