"""Differentiable diagonal scan ``h_t = a_t * h_{t-1} + b_t`` (``h_{-1} = 0``) on a parallel kernel, forward and
backward (the backward of a linear recurrence is the same recurrence run in reverse).

With ``g = dL/dh``: ``db_t = g_t + a_{t+1} db_{t+1}`` (a reverse scan with the coefficients shifted by one step) and
``da_t = db_t h_{t-1}`` (:mod:`lrnnkit.ops.linear_scan`). Both passes run the forward kernel: on CUDA the
chunk-parallel Triton scan (:mod:`.chunk`), elsewhere a log-depth doubling scan in torch (``ceil(log2 T)`` batched
steps; the Triton interpreter is far too slow to train with). ``a_t = 0`` resets the state, which is how packed
sequences (``cu_seqlens``) are kept apart: the reverse pass then sees ``a_{t+1} = 0`` at each sequence's last token.
Reference: :func:`.naive.diagonal_scan_naive` (tests compare values and gradients)."""
from __future__ import annotations

import torch

from ..linear_scan import Recurrence, differentiable_scan, doubling_scan, following

__all__ = ["diagonal_scan", "doubling_scan"]


def _kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_cuda:
        from .chunk import diagonal_scan_chunk
        return diagonal_scan_chunk(a.contiguous(), b.contiguous(), validate=False)
    return doubling_scan(a, b)


#: the diagonal recurrence's backward rules (:mod:`lrnnkit.ops.linear_scan`); ``_kernel`` looked up at each call
_RECURRENCE = Recurrence(kernel=lambda a, b: _kernel(a, b), adjoint=following,
                         coefficient_grad=lambda db, h_prev: db * h_prev)


def diagonal_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h`` (B, T, D) of ``h_t = a_t h_{t-1} + b_t`` from a, b (B, T, D) of one float dtype; differentiable in
    both (module text). No range check: callers pass ``a`` in [-1, 1] (the chunk kernel's domain)."""
    return differentiable_scan(_RECURRENCE, a, b)
