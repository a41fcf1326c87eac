"""Paper 004 — "Revisiting Bi-Linear State Transitions in Recurrent Neural Networks": every formal statement as an
executable check.

The extraction of this paper lost every formula, table entry and proposition number. The statements below are
reconstructed from the prose, the proofs of Appendix A and the figure/table captions; each statement's ``notes``
says what was reconstructed. The model (eqs. 2-3, reconstructed): a *pure* bilinear RNN

    h_t = W(x_t) h_{t-1},    W(x)_{ij} = sum_k T_{ijk} x_k,

with no additive terms, a one-hot (or embedded) input x_t and a linear read-out (an m-class linear classifier,
i.e. linear-argmax). The hierarchy (Figure 1, Sections 2.2-2.4): full bilinear T; factorized (CP rank R) T;
block-diagonal W(x) (blocks of size b, each a bilinear function of x); complex-diagonal W(x) = P D(x) P^{-1} with
a fixed P and D(x) real block-diagonal with 1x1 blocks and 2x2 rotation-scaling blocks [[a, -b], [b, a]];
real-diagonal W(x) = diag(a(x)); positive diagonal (Mamba-like).

Conventions (docs/conventions.rst): states are column vectors, the matrix of the word a_1 .. a_t is W(a_t) ... W(a_1); the
group word problem's state after g_1 .. g_t is the prefix product g_1 g_2 ... g_t (first g_1).

One module per statement group: ``proposition_2_2``, ``section_2_3``, ``proposition_2_4``, ``hierarchy``; helpers
shared by several groups live in ``_common``. Importing the package registers every statement."""
from __future__ import annotations

# the public names of the paper's statement groups (checks, recorded instances, helpers the tests use);
# importing a statement group registers its entries
from ._common import (PAPER, diagonal_power_states, group_table, noncommuting_pair, readout_feasible, w_of_input)
from .hierarchy import (check_block_vs_full, check_inclusions, check_positive_diagonal, check_strict_levels,
    free_block_injective, transition_group_is_perfect)
from .parameter_counts import (check_parameter_counts, cp_effective_dims, cp_tensor, cp_transition)
from .proposition_2_2 import (bfs_simulates, bilinear_model, check_proposition_2_2, check_scale_invariance,
    one_hot_tensor)
from .proposition_2_4 import (PARITY_CX, check_proposition_2_4, check_real_diagonal, check_remark_A3,
    clopper_pearson, parity_learnable, parity_states)
from .section_2_3 import (ABELIAN_CASES, abelian_fsa, check_abelian_only, check_commutation,
    check_orthogonal_rotation_form, check_proposition_2_3, rotation_model)

__all__ = ["ABELIAN_CASES", "PAPER", "PARITY_CX", "abelian_fsa", "bfs_simulates", "bilinear_model",
           "check_abelian_only", "check_block_vs_full", "check_commutation", "check_inclusions",
           "check_orthogonal_rotation_form", "check_parameter_counts", "check_positive_diagonal",
           "check_proposition_2_2", "check_proposition_2_3", "check_proposition_2_4", "check_real_diagonal",
           "check_remark_A3", "check_scale_invariance", "check_strict_levels", "clopper_pearson",
           "cp_effective_dims", "cp_tensor", "cp_transition", "diagonal_power_states",
           "free_block_injective", "group_table", "noncommuting_pair", "one_hot_tensor", "parity_learnable",
           "parity_states", "readout_feasible", "rotation_model", "transition_group_is_perfect",
           "w_of_input"]
