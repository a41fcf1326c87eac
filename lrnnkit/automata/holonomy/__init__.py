"""Krohn-Rhodes decomposition by holonomy (paper 000, Theorem 5 / Theorem 4's proof, C.3-C.4), one stage per module:

* :mod:`lrnnkit.automata.holonomy.decomposition`: the decomposition itself (``holonomy_decomposition``, the
  ``Holonomy`` cascade, lifting transformations to it; the mathematics is stated there);
* :mod:`lrnnkit.automata.holonomy.checks`: that the cascade emulates the semigroup (action, emulation, relational
  morphism, cascade form);
* :mod:`lrnnkit.automata.holonomy.refinement`: the composition factors of the holonomy groups (a report).

The names are re-exported here: ``from lrnnkit.automata.holonomy import holonomy_decomposition, check_all``.
"""
from .checks import (CheckResult, check_action, check_all, check_cascade, check_emulation,
                     check_relational_morphism)
from .decomposition import (DEPTH_RULES, MAX_CODES, MAX_IMAGES, MAX_SEMIGROUP, Holonomy, holonomy_decomposition,
                            holonomy_summary, mask_of, members, semigroup_closure)
from .refinement import refinement_report

__all__ = ["Holonomy", "holonomy_decomposition", "holonomy_summary", "semigroup_closure", "mask_of", "members",
           "check_action", "check_emulation", "check_relational_morphism", "check_cascade", "check_all",
           "CheckResult", "refinement_report", "DEPTH_RULES", "MAX_IMAGES", "MAX_CODES", "MAX_SEMIGROUP"]
