"""Explicit weights for every construction of the papers, in the model format (lrnnkit.model), each certified for
inputs of every length by lrnnkit.certify. See :mod:`lrnnkit.constructions.registry`."""
from . import _modules, registry
from .registry import Construction, Cost, applicable, candidates, catalogue, choose, compile, get, model_cost, register

registry.add_loader(_modules.load_all)

__all__ = ["Construction", "Cost", "applicable", "candidates", "catalogue", "choose", "compile", "get", "model_cost",
           "register"]
