"""Finite automata: the FSA type, files and presets, minimisation, transition monoids, groups and embeddings.

The Krohn-Rhodes (holonomy) decomposition lives in :mod:`lrnnkit.automata.holonomy`.
"""
from .fsa import FSA
from .io import load_fsa, save_fsa
from .sources import load_source
from .minimize import minimize, minimal_states, reachable, equivalent, distinguishing_word
from .monoid import TransformationMonoid, transition_monoid, closure
from .groups import named_group, group_word_problem, group_structure
from .embeddings import (cayley_embedding, minimal_faithful_permutation_representation,
                         minimal_faithful_permutation_degree)
from .info import describe

__all__ = ["FSA", "load_fsa", "save_fsa", "load_source", "minimize", "minimal_states", "reachable", "equivalent",
           "distinguishing_word", "TransformationMonoid", "transition_monoid", "closure", "named_group",
           "group_word_problem", "group_structure", "cayley_embedding",
           "minimal_faithful_permutation_representation", "minimal_faithful_permutation_degree", "describe"]
