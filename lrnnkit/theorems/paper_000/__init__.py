"""Paper 000 (Grazzi et al., "Unlocking State-Tracking in Linear RNNs Through Negative Eigenvalues"): every formal
statement as an executable check.

Conventions of the paper used throughout (000, Section 3.1 and eq. (1), (5)):

* an LRNN layer is ``H_i = A(x_i) H_{i-1} + B(x_i)``, ``y_i = dec(H_i, x_i)``;
* a generalized Householder (GH) matrix is ``C = I - beta v v^T`` with ``||v|| = 1``; its one non-trivial eigenvalue
  is ``1 - beta``; ``M_k^n(Omega)`` (eq. 5) is the set of products of ``k`` GH matrices whose non-trivial eigenvalue
  ``1 - beta_i`` lies in ``Omega``;
* finite precision for the impossibility theorems (Appendix A.3 and B.1): the state after ``k`` steps is
  ``cast(sum_i cast(prod A ... B) + cast(prod A ... H_0))`` -- every product of transition matrices is computed
  exactly, each term is cast, the exact sum of the cast terms is cast once more. ``cast`` maps reals to a finite set
  D (applied separately to real and imaginary parts).

Every check below is independent of lrnnkit's constructions (exact rationals, ``lrnnkit.exact`` cyclotomic numbers,
sympy for characteristic polynomials, hypothesis for the counterexample searches); the tests in
``proofs_tests/theorems/test_paper_000.py`` cross-check the pieces against the library modules (precision,
constructions).

The exact tuple-matrix helpers and the hypothesis search helpers are shared with the other papers (``../_exact.py``).

One module per statement group: ``proposition_1``, ``section_4``, ``theorem_1_2``, ``theorem_3``, ``theorem_4_5``,
``theorem_6``, ``equations``, ``appendix``; helpers shared by several groups live in ``_common``. Importing the
package registers every statement."""
from __future__ import annotations

# the public names of the paper's statement groups (checks, recorded instances, helpers the tests use);
# importing a statement group registers its entries
from ._common import (PAPER, charpoly, poly_div_linear, refl, rot, swap_vector, transpositions)
from .appendix import (check_appendix_a2, check_appendix_d)
from .equations import (check_eq3, check_eq4)
from .proof_errata import (check_prop_1_3a_real_vectors, check_theorem_1_tail, check_theorem_1_unrolling,
    check_theorem_2_jordan_signs, check_theorem_2_tail, check_theorem_3_displaced, check_theorem_6_induction)
from .proposition_1 import (P13B_CE, UNIT_K3_FACTORS, UNIT_K3_H0, all_roots_real, cayley_orthogonal,
    check_prop1_consequence, check_prop1_consequence_unit_interval, check_prop_1_1, check_prop_1_2a, check_prop_1_2b,
    check_prop_1_2c, check_prop_1_2c_proof, check_prop_1_3a, check_prop_1_3b, householder_factors,
    nonneg_real_spectrum, perm_matrix, schur_cohn_inside, spectrum_13a_ok, two_factor_spectra, unit_interval_counter_facts)
from .section_4 import (check_inclusion, check_multi_token, check_rotation)
from .section_4_1 import (check_equation_2, check_triangular, check_zero_matrix, counter_parity_failure,
    triangular_product_ok)
from .theorem_1_2 import (BF16, BinaryFormat, MODES, T1_A1, T1_H0, T2_A1, T2_H0, TOY8, cast_model_states,
    cast_model_terms, check_theorem_1, check_theorem_2, separates, tail_monotone)
from .theorem_1_2_generic import (cast_continuous_at, check_theorem_1_generic, check_theorem_2_generic, generic_lrnn,
    generic_search, limit_points)
from .theorem_3 import (THM3_REGULAR, check_theorem_3, closure, compose, embeddings, group_fsas, implements,
    regular_automaton)
from .theorem_4_5 import (S4_IDEMPOTENT, brute_force_agrees, cascade_check, check_theorem_4, check_theorem_4_bounds,
    check_theorem_4_wiring, check_theorem_5, pr_layer_ok, s4_idempotent_cascade, small_holonomy_widths)
from .theorem_6 import (check_theorem_2_printed_index, check_theorem_6, theorem_6_layer2)
from . import tables_discussion  # noqa: F401  (registers its entries)

__all__ = ["BF16", "BinaryFormat", "MODES", "P13B_CE", "PAPER", "S4_IDEMPOTENT", "T1_A1", "T1_H0", "T2_A1", "T2_H0",
           "THM3_REGULAR", "TOY8", "UNIT_K3_FACTORS", "UNIT_K3_H0", "all_roots_real", "brute_force_agrees",
           "cascade_check", "cast_continuous_at", "cast_model_states", "cast_model_terms",
           "cayley_orthogonal", "charpoly", "check_appendix_a2", "check_appendix_d", "check_eq3",
           "check_eq4", "check_equation_2", "check_inclusion", "check_multi_token",
           "check_prop1_consequence", "check_prop1_consequence_unit_interval", "check_prop_1_1",
           "check_prop_1_2a", "check_prop_1_2b", "check_prop_1_2c", "check_prop_1_2c_proof",
           "check_prop_1_3a", "check_prop_1_3a_real_vectors", "check_prop_1_3b", "check_rotation",
           "check_theorem_1", "check_theorem_1_generic", "check_theorem_1_tail",
           "check_theorem_1_unrolling", "check_theorem_2", "check_theorem_2_generic", "check_theorem_2_printed_index",
           "check_theorem_2_jordan_signs", "check_theorem_2_tail", "check_theorem_3",
           "check_theorem_3_displaced", "check_theorem_4", "check_theorem_4_bounds",
           "check_theorem_4_wiring", "check_theorem_5", "check_theorem_6", "check_theorem_6_induction",
           "check_triangular", "check_zero_matrix", "closure", "compose", "counter_parity_failure",
           "embeddings", "generic_lrnn", "generic_search", "group_fsas", "householder_factors",
           "implements", "limit_points", "nonneg_real_spectrum", "two_factor_spectra", "perm_matrix", "poly_div_linear", "pr_layer_ok", "refl",
           "regular_automaton", "rot", "s4_idempotent_cascade", "schur_cohn_inside", "separates",
           "small_holonomy_widths", "spectrum_13a_ok", "swap_vector", "tail_monotone", "theorem_6_layer2", "transpositions",
           "triangular_product_ok", "unit_interval_counter_facts"]
