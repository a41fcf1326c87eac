"""Paper 001 (Siems et al., "DeltaProduct: Increasing the Expressivity of DeltaNet Through Products of
Householders"): every formal statement as an executable check.

DeltaProduct (001, Section 3): each token i applies n_h gradient steps ``H_{i,j} = (I - beta_{i,j} k_{i,j}
k_{i,j}^T) H_{i,j-1} + beta_{i,j} k_{i,j} v_{i,j}^T`` (||k|| = 1, beta in [0, 2] with the 2 x sigmoid of 000), so
``A(x_i) = prod_{j=1}^{n_h} (I - beta_{i,j} k_{i,j} k_{i,j}^T)``. The extraction's product is written
``prod_{j=1}^{n_h}``; since step j = 1 is applied first, the matrix product has the j = n_h factor on the LEFT
(docs/conventions.rst: "the later factor on the left"); the checks below use that order (the rank / norm / eigenvalue claims
do not depend on it).

Exact arithmetic throughout (Fractions, lrnnkit.exact cyclotomic numbers for rotations and the icosahedral group);
helpers are shared with paper_000 (``../_exact.py``).

One module per statement group: ``theorem_1``, ``deltaproduct``, ``groups``, ``section_2``, ``tables``; helpers
shared by several groups live in
``_common``. Importing the package registers every statement."""
from __future__ import annotations

# the public names of the paper's statement groups (checks, recorded instances, helpers the tests use);
# importing a statement group registers its entries
from ._common import (PAPER)
from .deltaproduct import (check_figure_4, check_norm, check_rank, check_reset, check_unrolled, deltaproduct_A)
from .groups import (check_s4_a5, check_sn, two_reflections)
from .section_2 import (S3_PERMS, check_beta_geometry, check_d3_s3, check_gradient_step, d3_s3_isomorphisms,
    deltanet_loss, gradient_by_differences)
from .tables import (check_table_1_avg, check_table_2_avg, check_table_2_improvements, check_table_2_sources)
from .theorem_1 import (check_equation_3, check_lemma_1, check_theorem_1, check_two_heads,
    dihedral_lrnn_counterexample, dihedral_mul)

__all__ = ["PAPER", "S3_PERMS", "check_beta_geometry", "check_d3_s3", "check_equation_3", "check_figure_4",
           "check_gradient_step", "check_lemma_1", "check_norm", "check_rank", "check_reset", "check_s4_a5",
           "check_sn", "check_table_1_avg", "check_table_2_avg", "check_table_2_improvements",
           "check_table_2_sources", "check_theorem_1", "check_two_heads", "check_unrolled", "d3_s3_isomorphisms",
           "deltanet_loss", "deltaproduct_A", "dihedral_lrnn_counterexample", "dihedral_mul",
           "gradient_by_differences", "two_reflections"]
