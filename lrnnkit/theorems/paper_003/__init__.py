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
independent oracle in proofs_tests/test_theorems_B_003.py).

One module per statement group: ``equation_3``, ``theorem_2``, ``theorem_c1``, ``theorem_d``, ``mixer``,
``appendix_g``; helpers shared by several groups live in ``_common``. Importing the package registers every statement."""
from __future__ import annotations

# the names the former single-module paper exposed through its imports (tests and other papers use them)
import math  # noqa: F401
from fractions import Fraction as F  # noqa: F401
import numpy as np  # noqa: F401

from ...model import exact_matvec, gh_matrix_exact  # noqa: F401
from .._exact import det, dot, exact_identity as eye, exact_matmul as mm, find_or_none, fstr, is_pd, is_psd, mstr  # noqa: F401
from .._exact import madd_list as add, mscale_list as scal, msub as sub, norm2_lt1, rank, solve  # noqa: F401
from .._exact import transpose as tr  # noqa: F401
from ._common import PAPER, _mat_strategy, _rat_strategy, gh  # noqa: F401
from .equation_3 import _dense_states, _diag_rnn, check_appendix_B_eq7, check_equation_3  # noqa: F401
from .theorem_2 import (THM21_CX, _descent_ok, _thm21_search, _thm21_strategy, check_theorem_2_1, check_theorem_2_2,
    lipschitz_lt1, lipschitz_operator)  # noqa: F401
from .theorem_c1 import LN99, THMC1_CX, check_appendix_C3, check_theorem_C_1, memory_closed_form, memory_monte_carlo  # noqa: F401
from .theorem_d import (cayley_orthogonal, check_appendix_D2_eq9, check_theorem_D_1, check_theorem_D_2,
    householder_for, reflections_of_orthogonal)  # noqa: F401
from .mixer import (_mixer_contractive, _mixer_json, _mixer_strategy, _sym_from, check_claim_contractive,
    check_claim_full_rank, check_claim_mixer_contractive, check_claim_negative_eigenvalues, check_claim_rank_r, mixer)  # noqa: F401
from .circulant import check_circulant, circulant  # noqa: F401
from .appendix_g import G_WORDS, check_g2_pairings, count_pairings, double_factorial, check_proposition_G_2, check_remark_G_3, check_remark_G_4, gram_deviation  # noqa: F401
from .proof_errata import F1_LAMS, F1_P, T22_LAMS, T22_P, check_theorem_2_1_neumann, check_theorem_2_2_eigenvalues, printed_f1_bound, repaired_f1_bound  # noqa: F401
from . import appendix_e  # noqa: F401  (registers the entries on 000's tables)
