"""Deprecated for one release: the kernels moved to :mod:`lrnnkit.ops` (one folder per recurrence) and the
``torch.nn.Module`` layers to :mod:`lrnnkit.layers`; the fixture models to :mod:`lrnnkit.testing.examples`.

``lrnnkit.kernels`` and every old submodule path (``lrnnkit.kernels.gh.wy``, ``lrnnkit.kernels.delta_product``, ...)
still import, as the module at its new home, with a DeprecationWarning naming it (:data:`MOVED` says where each
went)."""
import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from ..layers import (BilinearLayer, BlockDiagonalLayer, DeltaProductLayer, DiagonalLayer, FixedPointLayer,
                      GatedRMSNorm, LoadedModel, RMSNorm, ShortConvolution, load, run_model)
from ..ops import chunk_gh

__all__ = ["load", "run_model", "LoadedModel", "DiagonalLayer", "BlockDiagonalLayer", "BilinearLayer",
           "DeltaProductLayer", "chunk_gh", "ShortConvolution", "RMSNorm", "GatedRMSNorm", "FixedPointLayer"]

#: old submodule (below lrnnkit.kernels) -> its new home; a name not listed moved to lrnnkit.ops under its old name
MOVED = {"delta_product": "lrnnkit.layers.delta_product", "fixed_point": "lrnnkit.layers.fixed_point",
         "compiled": "lrnnkit.layers.compiled", "layer_io": "lrnnkit.layers.layer_io",
         "decode_cache": "lrnnkit.layers.decode_cache", "fla_swap": "lrnnkit.layers.fla_swap",
         "layers": "lrnnkit.layers.scans", "examples": "lrnnkit.testing.examples"}


def new_home(old: str) -> str | None:
    """The module that the old dotted name ``lrnnkit.kernels.<sub>`` now is, or None for another name."""
    if not old.startswith(__name__ + "."):
        return None
    sub = old[len(__name__) + 1:]
    head, _, rest = sub.partition(".")
    return MOVED[head] + ("." + rest if rest else "") if head in MOVED else "lrnnkit.ops." + sub


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old submodule path as the module at its new home (the same module object)."""

    def find_spec(self, name, path=None, target=None):
        new = new_home(name)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        new = new_home(spec.name)
        warnings.warn(f"{spec.name} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        pass


if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
    sys.meta_path.insert(0, _OldPaths())   # before the path finder, which would load a second copy
warnings.warn("lrnnkit.kernels is deprecated: use lrnnkit.ops (kernels) and lrnnkit.layers (nn.Module layers)",
              DeprecationWarning, stacklevel=2)
