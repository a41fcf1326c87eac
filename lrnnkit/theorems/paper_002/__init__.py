"""Paper 002 — Fan, Chi, Rudnicky, "Advancing Regular Language Reasoning in Linear Recurrent Neural Networks": every
formal statement as an executable check.

The paper's LRNN (eq. 1) is ``x_k = A_k x_{k-1} + B u_k``, ``y_k = h(x_k)`` with a readout h that "may or may not be
linear". Propositions 1 and 2 (input-independent and diagonal input-dependent LRNNs are "inconsistent in
representing subtraction") are proved by comparing the states of the four strings ``0-1``, ``1-0``, ``0-0-1`` and
``0-1-0``: their notion of consistency (reconstructed from the proofs) is at the level of states — different values
need different states (``x_{0-1} != x_{1-0}``) and equal values equal states (``x_{0-0-1} = x_{0-1-0}``). The block-
diagonal model (eqs. 5-6) constrains every column of every block to p-norm <= 1; eq. 7 shows products stay bounded
for p = 1.

Below, ``u_c`` denotes the additive term ``B u`` of character c (the proofs absorb B into u).

One module per statement group: ``propositions``, ``section_2``, ``section_3``, ``appendix_a2``, ``section_4``;
helpers shared by several groups live in ``_common``. Importing the package registers every statement."""
from __future__ import annotations

# the public names of the paper's statement groups (checks, recorded instances, helpers the tests use);
# importing a statement group registers its entries
from ._common import (CHARS, PAPER)
from .appendix_a2 import (PRINTED_SPT, check_cost, check_pscan, check_spt, pscan_matmul_counts, pscan_printed,
    sequential, spt, spt_rounds)
from .propositions import (check_liquid, check_proposition_1, check_proposition_2, consistent_on_proof_strings,
    dense_subtraction_model, four_strings, liquid_witness, run_affine)
from .section_2 import (base4_collapse_length, base4_decode, base4_states, check_claim_section_2, subtraction_value)
from .section_3 import (P12_BLOCK, check_eq6_monotonicity, check_eq6_normalization, check_eq7, check_fsa_columns,
    check_small_p, column_pnorm_le1_exact)
from .section_4 import (check_examples)

__all__ = ["CHARS", "P12_BLOCK", "PAPER", "PRINTED_SPT", "base4_collapse_length", "base4_decode", "base4_states",
           "check_claim_section_2", "check_cost", "check_eq6_monotonicity", "check_eq6_normalization",
           "check_eq7", "check_examples", "check_fsa_columns", "check_liquid", "check_proposition_1",
           "check_proposition_2", "check_pscan", "check_small_p", "check_spt", "column_pnorm_le1_exact",
           "consistent_on_proof_strings", "dense_subtraction_model", "four_strings", "liquid_witness",
           "pscan_matmul_counts", "pscan_printed", "run_affine", "sequential", "spt", "spt_rounds",
           "subtraction_value"]
