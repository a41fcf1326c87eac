"""Differentiable block-diagonal scan ``h_t = A_t h_{t-1} + b_t`` (``h_{-1} = 0``; paper 002, eq. 5: NB blocks of
BS x BS per token) on the fused recurrent kernel, forward and backward.

The backward is the same recurrence run in reverse with the transposed blocks (:mod:`lrnnkit.ops.linear_scan`):
``db_t = g_t + A_{t+1}^T db_{t+1}`` and ``dA_t = db_t h_{t-1}^T``. Both passes run the forward kernel: on CUDA the
fused recurrent Triton kernel (:mod:`.fused_recurrent`: one program per sequence and block, the block's state in
registers), elsewhere a log-depth doubling scan in torch (``ceil(log2 T)`` batched steps of BS x BS products).
Reference: :func:`.naive.block_diagonal_scan_naive` (tests compare values and gradients)."""
from __future__ import annotations

import torch

from ..linear_scan import Recurrence, differentiable_scan, doubling_scan, following

__all__ = ["block_diagonal_scan"]


def _kernel(A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if A.is_cuda:
        from .fused_recurrent import block_diagonal_scan_fused
        return block_diagonal_scan_fused(A.contiguous(), b.contiguous(), validate=False)
    return doubling_scan(A, b, matrix=True)


#: the block recurrence's backward rules (:mod:`lrnnkit.ops.linear_scan`); ``_kernel`` looked up at each call
_RECURRENCE = Recurrence(kernel=lambda A, b: _kernel(A, b),
                         adjoint=lambda A: following(A.transpose(-1, -2)),
                         coefficient_grad=lambda db, h_prev: db[..., :, None] * h_prev[..., None, :])


def block_diagonal_scan(A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h`` (B, T, NB, BS) of ``h_t = A_t h_{t-1} + b_t`` from A (B, T, NB, BS, BS) and b (B, T, NB, BS) of one
    float dtype; differentiable in both (module text). No checks: callers pass finite blocks (002's column-normalised
    ones)."""
    return differentiable_scan(_RECURRENCE, A, b)
