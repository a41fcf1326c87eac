"""Explicit weights for every construction of the papers, in the model format (lrnnkit.model), each certified for
inputs of every length by lrnnkit.certify. See :mod:`lrnnkit.constructions.registry`."""
from .registry import Construction, applicable, catalogue, compile, get, register

__all__ = ["Construction", "applicable", "catalogue", "compile", "get", "register"]
