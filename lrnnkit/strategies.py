"""Deprecated for one release: the hypothesis strategies are :mod:`lrnnkit.testing.strategies`."""
import warnings

from .testing.strategies import (transformations, permutations, transformation_generators, permutation_generators,
                                 fsas, group_automata, words)

__all__ = ["transformations", "permutations", "transformation_generators", "permutation_generators", "fsas",
           "group_automata", "words"]

warnings.warn("lrnnkit.strategies is deprecated: use lrnnkit.testing.strategies", DeprecationWarning, stacklevel=2)
