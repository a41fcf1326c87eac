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
sympy for characteristic polynomials, hypothesis for the counterexample searches); tests in
``proofs_tests/test_theorems_A*.py`` cross-check the pieces against the library modules (precision, constructions).

The exact tuple-matrix helpers and the hypothesis search helpers are shared with the other papers (``../_exact.py``).

One module per statement group: ``proposition_1``, ``section_4``, ``theorem_1_2``, ``theorem_3``, ``theorem_4_5``,
``theorem_6``, ``equations``, ``appendix``; helpers shared by several groups live in ``_common``. Importing the
package registers every statement."""
from __future__ import annotations

# the names the former single-module paper exposed through its imports (tests and other papers use them)
import functools  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
from fractions import Fraction as F  # noqa: F401
from typing import Sequence  # noqa: F401

from ...exact import cos2pi, sin2pi  # noqa: F401
from .._exact import _fac_json, _mat_json, _st, basis_vector, dot, eye, gh, gh_product, householder, is_psd, madd, mm  # noqa: F401
from .._exact import det, mv, prod, search, st_fraction, st_gh_product, st_unit, tr  # noqa: F401
from ._common import PAPER, charpoly, poly_div_linear, refl, rot, swap_vector, transpositions  # noqa: F401
from .proposition_1 import (P13B_CE, UNIT_K3_FACTORS, UNIT_K3_H0, unit_interval_counter_facts,
    check_prop1_consequence_unit_interval, _P1, _gh_float, _mmf, all_roots_real, cayley_orthogonal, check_prop1_consequence,
    check_prop_1_1, check_prop_1_2a, check_prop_1_2b, check_prop_1_2c, check_prop_1_2c_proof, check_prop_1_3a,
    check_prop_1_3b, householder_factors, perm_matrix, schur_cohn_inside, spectrum_13a_ok)  # noqa: F401
from .section_4 import check_inclusion, check_multi_token, check_rotation  # noqa: F401
from .theorem_1_2 import (BF16, BinaryFormat, MODES, T1_A1, T1_H0, T2_A1, T2_H0, TOY8, _corrected_search, _random_lrnn,
    cast_model_states, cast_model_terms, check_theorem_1, check_theorem_2, separates, tail_monotone)  # noqa: F401
from .theorem_1_2_generic import (cast_continuous_at, check_theorem_1_generic, check_theorem_2_generic,  # noqa: F401
    generic_lrnn, generic_search, limit_points)  # noqa: F401
from .theorem_3 import THM3_REGULAR, regular_automaton, check_theorem_3, closure, compose, embeddings, group_fsas, implements  # noqa: F401
from .theorem_4_5 import (S4_IDEMPOTENT, _KR_FSAS, _cascade_runs, cascade_check, check_theorem_4, check_theorem_4_bounds,
    check_theorem_4_wiring, s4_idempotent_cascade, small_holonomy_widths, brute_force_agrees,
    check_theorem_5, pr_layer_ok)  # noqa: F401
from .theorem_6 import check_theorem_6  # noqa: F401
from .equations import check_eq3, check_eq4  # noqa: F401
from .appendix import check_appendix_a2, check_appendix_d  # noqa: F401
from .section_4_1 import (check_equation_2, check_triangular, check_zero_matrix, counter_parity_failure,  # noqa: F401
    triangular_product_ok)  # noqa: F401
from .proof_errata import (check_prop_1_3a_real_vectors, check_theorem_1_tail, check_theorem_1_unrolling,  # noqa: F401
    check_theorem_2_jordan_signs, check_theorem_2_tail, check_theorem_3_displaced, check_theorem_6_induction)
from . import tables_discussion  # noqa: F401  (registers the Discussion and Table 4 entries)
