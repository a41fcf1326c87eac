"""Differentiable diagonal scan ``h_t = a_t * h_{t-1} + b_t`` (``h_{-1} = 0``) on a parallel kernel, forward and
backward (the backward of a linear recurrence is the same recurrence run in reverse).

With ``g = dL/dh``: ``db_t = g_t + a_{t+1} db_{t+1}`` (a reverse scan with the coefficients shifted by one step)
and ``da_t = db_t h_{t-1}``. Both passes run the forward kernel: on CUDA the chunk-parallel Triton scan
(:mod:`.chunk`), elsewhere a log-depth doubling scan in torch (``ceil(log2 T)`` batched steps; the Triton
interpreter is far too slow to train with). ``a_t = 0`` resets the state, which is how packed sequences
(``cu_seqlens``) are kept apart: the reverse pass then sees ``a_{t+1} = 0`` at each sequence's last token.
Reference: :func:`.naive.diagonal_scan_naive` (tests compare values and gradients)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["diagonal_scan"]


def doubling_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """All states of the diagonal recurrence, a, b (B, T, D), by recursive doubling: after the step with stride
    s, ``(a_t, b_t)`` is the composition of the maps ``t - 2s + 1 .. t`` (maps before the start are identities)."""
    T = a.shape[1]
    s = 1
    while s < T:
        b = b + a * F.pad(b, (0, 0, s, 0))[:, :T]
        a = a * F.pad(a, (0, 0, s, 0), value=1.0)[:, :T]
        s *= 2
    return b


def _kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_cuda:
        from .chunk import diagonal_scan_chunk
        return diagonal_scan_chunk(a.contiguous(), b.contiguous(), validate=False)
    return doubling_scan(a, b)


class _DiagonalScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        h = _kernel(a, b)
        ctx.save_for_backward(a, h)
        return h

    @staticmethod
    def backward(ctx, g):
        a, h = ctx.saved_tensors
        a_next = F.pad(a[:, 1:], (0, 0, 0, 1))
        db = _kernel(a_next.flip(1), g.contiguous().flip(1)).flip(1)
        da = db * F.pad(h[:, :-1], (0, 0, 1, 0))
        return da, db


def diagonal_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h`` (B, T, D) of ``h_t = a_t h_{t-1} + b_t`` from a, b (B, T, D) of one float dtype; differentiable in
    both (module text). No range check: callers pass ``a`` in [-1, 1] (the chunk kernel's domain)."""
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return _DiagonalScan.apply(a, b)
    return _kernel(a, b)
