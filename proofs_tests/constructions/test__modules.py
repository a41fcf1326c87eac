"""The loader of the construction modules (lrnnkit.constructions._modules): every module of the package except the
registry, the private helpers and the libraries below registers at least one construction, the libraries none, and
loading twice registers nothing twice."""
import os
import pkgutil

import lrnnkit.constructions
from lrnnkit.constructions import _modules, catalogue

#: modules of the package that are libraries of the constructions, not constructions (their docstrings say so)
LIBRARIES = {"householder": "products of GH matrices (paper 000, Proposition 1.2)",
             "fixed_point": "dense LRNNs as fixed points of diagonal ones (paper 003): analysis only"}


def test_every_construction_module_registers_a_construction():
    _modules.load_all()
    here = os.path.dirname(lrnnkit.constructions.__file__)
    public = {m.name for m in pkgutil.iter_modules([here]) if not m.name.startswith("_")} - {"registry"}
    owners = {c.build.__module__.rsplit(".", 1)[1] for c in catalogue()}
    assert owners == public - set(LIBRARIES)
    assert set(LIBRARIES) <= public
    n = len(catalogue())
    _modules.load_all()                                   # modules import once: nothing registered twice
    assert len(catalogue()) == n and len({c.name for c in catalogue()}) == n
