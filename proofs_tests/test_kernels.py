"""The old paths of the kernels and layers (lrnnkit.kernels, lrnnkit.strategies) keep working for one release:
each old module path imports as the very module at its new home (lrnnkit.ops, lrnnkit.layers, lrnnkit.testing),
with a DeprecationWarning naming it; a name that never existed still fails."""
import importlib
import sys

import pytest

import lrnnkit.layers
import lrnnkit.ops


def _fresh(name):
    for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        sys.modules.pop(k)


@pytest.mark.parametrize("old,new", [("lrnnkit.kernels.gh.wy", "lrnnkit.ops.gh.wy"),
                                     ("lrnnkit.kernels.delta_product", "lrnnkit.layers.delta_product"),
                                     ("lrnnkit.kernels.layers", "lrnnkit.layers.scans"),
                                     ("lrnnkit.kernels.examples", "lrnnkit.testing.examples"),
                                     ("lrnnkit.kernels.l2norm", "lrnnkit.ops.l2norm")])
def test_an_old_module_path_is_the_new_module(old, new):
    import lrnnkit.kernels  # noqa: F401  (installs the old paths)
    _fresh(old)
    with pytest.warns(DeprecationWarning, match=new):
        mod = importlib.import_module(old)
    assert mod is importlib.import_module(new)


def test_the_old_package_names_the_public_names():
    _fresh("lrnnkit.kernels")
    with pytest.warns(DeprecationWarning, match="lrnnkit.ops"):
        import lrnnkit.kernels as K
    assert K.DeltaProductLayer is lrnnkit.layers.DeltaProductLayer and K.chunk_gh is lrnnkit.ops.chunk_gh
    assert K.new_home("lrnnkit.kernels.fla_swap") == "lrnnkit.layers.fla_swap"
    with pytest.raises(ImportError):
        importlib.import_module("lrnnkit.kernels.no_such_module")


def test_the_old_strategies_path():
    from lrnnkit.testing import strategies
    _fresh("lrnnkit.strategies")
    with pytest.warns(DeprecationWarning, match="lrnnkit.testing.strategies"):
        import lrnnkit.strategies as old
    assert old.fsas is strategies.fsas and set(old.__all__) == set(strategies.__all__)
