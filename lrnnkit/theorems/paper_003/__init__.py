"""Paper 003 — Movahedi, Sarnthein, Muca Cirone, Orvieto, "Fixed-Point RNNs: From Diagonal to Dense in a Few
Iterations": every formal statement as an executable check.

The paper computes a dense linear RNN ``h*_t = Q_t^{-1} Lambda_t h*_{t-1} + B_t x_t`` (eq. 2) as the fixed point in
depth of the diagonal RNN ``f(x, h)_t = Lambda_t f_{t-1} + Q_t B_t x_t + (I - Q_t) h_t`` (eq. 3), iterated as
``h^l = f(x, h^{l-1})`` (eq. 4). Theorem 2.1 gives a sufficient condition for that iteration to contract, Theorem
2.2 a descent property of the fixed-point gradient, Theorem C.1 a "memory" law for selective gates, Theorem D.2 the
Householder factorization that motivates the channel mixer ``Q_t = prod_i (I - 2 alpha_i u_i u_i^T)`` (eq. 10), and
Proposition G.2 the low-rank expressivity result behind the informal Theorem D.1.

Exact arithmetic: the linear-algebra checks use :class:`fractions.Fraction` matrices. ``||P||_2 < 1`` is decided
exactly as "``I - P^T P`` is positive definite", tested by an exact LDL^T elimination (sympy's
``is_positive_definite`` does the same but is ~100x slower inside a property search; sympy is used as the
independent oracle in proofs_tests/theorems/test_paper_003.py).

One module per statement group: ``equation_3``, ``theorem_2``, ``theorem_c1``, ``theorem_d``, ``mixer``,
``appendix_g``; helpers shared by several groups live in ``_common``. Importing the package registers every statement."""
from __future__ import annotations

# the public names of the paper's statement groups (checks, recorded instances, helpers the tests use);
# importing a statement group registers its entries
from ._common import (PAPER, gh)
from .appendix_g import (G_WORDS, check_g2_pairings, check_proposition_G_2, check_remark_G_3, check_remark_G_4,
    count_pairings, double_factorial, gram_deviation)
from .circulant import (check_circulant, circulant)
from .equation_3 import (check_appendix_B_eq7, check_equation_3)
from .mixer import (check_claim_contractive, check_claim_full_rank, check_claim_mixer_contractive,
    check_claim_negative_eigenvalues, check_claim_rank_r, mixer)
from .proof_errata import (F1_LAMS, F1_P, T22_LAMS, T22_P, check_theorem_2_1_neumann, check_theorem_2_2_eigenvalues,
    printed_f1_bound, repaired_f1_bound)
from .theorem_2 import (THM21_CX, check_theorem_2_1, check_theorem_2_2, lipschitz_lt1, lipschitz_operator)
from .theorem_c1 import (LN99, THMC1_CX, check_appendix_C3, check_theorem_C_1, memory_closed_form, memory_monte_carlo)
from .theorem_d import (cayley_orthogonal, check_appendix_D2_eq9, check_theorem_D_1, check_theorem_D_2,
    householder_for, reflections_of_orthogonal)
from . import appendix_e  # noqa: F401  (registers its entries)

__all__ = ["F1_LAMS", "F1_P", "G_WORDS", "LN99", "PAPER", "T22_LAMS", "T22_P", "THM21_CX", "THMC1_CX",
           "cayley_orthogonal", "check_appendix_B_eq7", "check_appendix_C3", "check_appendix_D2_eq9",
           "check_circulant", "check_claim_contractive", "check_claim_full_rank",
           "check_claim_mixer_contractive", "check_claim_negative_eigenvalues", "check_claim_rank_r",
           "check_equation_3", "check_g2_pairings", "check_proposition_G_2", "check_remark_G_3",
           "check_remark_G_4", "check_theorem_2_1", "check_theorem_2_1_neumann", "check_theorem_2_2",
           "check_theorem_2_2_eigenvalues", "check_theorem_C_1", "check_theorem_D_1", "check_theorem_D_2",
           "circulant", "count_pairings", "double_factorial", "gh", "gram_deviation", "householder_for",
           "lipschitz_lt1", "lipschitz_operator", "memory_closed_form", "memory_monte_carlo", "mixer",
           "printed_f1_bound", "reflections_of_orthogonal", "repaired_f1_bound"]
