"""Imports every construction module so each registers itself. A module that fails to import is a bug: the error
propagates (no silent skipping), except that modules not written yet are simply absent from this list."""
import importlib
import pkgutil

from . import __path__ as _pkg_path

for _m in sorted(m.name for m in pkgutil.iter_modules(_pkg_path)):
    if _m not in ("registry", "_modules") and not _m.startswith("_"):
        importlib.import_module(f"{__package__}.{_m}")
