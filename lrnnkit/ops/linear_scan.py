"""Scans of the linear recurrence ``h_t = A_t h_{t-1} + b_t`` shared by the diagonal and block-diagonal layers (000,
eq. 1 with a diagonal ``A``; 002, eq. 5 with blocks): the log-depth doubling scan in torch, and the backward of any
scan kernel as the same recurrence run in reverse (002, Section 3: the layers' parallel scans).

For ``h_t = A_t h_{t-1} + b_t`` (``h_{-1} = 0``, along dim 1) and ``g_t = dL/dh_t`` (the direct gradient of each state),
the adjoint ``lambda_t = g_t + A_{t+1}^T lambda_{t+1}`` is the forward recurrence on the reversed sequence with
coefficients ``A_{t+1}^T`` (zero after the end), and ``db_t = lambda_t``, ``dA_t = lambda_t h_{t-1}^T`` (for a
diagonal ``A``: ``lambda_t h_{t-1}``). A scan supplies its forward kernel and these two rules as a
:class:`Recurrence`; :func:`differentiable_scan` runs the kernel twice, forward and reversed, and saves only ``A``
and the states."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

__all__ = ["Recurrence", "differentiable_scan", "doubling_scan", "previous", "following"]


def previous(x: torch.Tensor) -> torch.Tensor:
    """``x_{t-1}`` along dim 1, zero at ``t = 0``."""
    return torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], 1)


def following(x: torch.Tensor) -> torch.Tensor:
    """``x_{t+1}`` along dim 1, zero at the last position."""
    return torch.cat([x[:, 1:], torch.zeros_like(x[:, :1])], 1)


def doubling_scan(A: torch.Tensor, b: torch.Tensor, matrix: bool = False) -> torch.Tensor:
    """All states by recursive doubling along dim 1, ``ceil(log2 T)`` batched steps: after the step with stride s,
    ``(A_t, b_t)`` is the composition of the maps ``t - 2s + 1 .. t`` (maps before the start are identities).
    ``matrix=False``: elementwise ``A, b`` (B, T, ...); ``matrix=True``: ``A`` (B, T, ..., n, n), ``b`` (B, T, ...,
    n)."""
    T = b.shape[1]
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device) if matrix else None
    s = 1
    while s < T:
        shift = [0, 0] * (b.ndim - 2) + [s, 0]
        b = b + (torch.einsum("bt...ij,bt...j->bt...i", A, F.pad(b, shift)[:, :T]) if matrix
                 else A * F.pad(b, shift)[:, :T])
        if matrix:
            A = A @ torch.cat([eye.expand(A.shape[0], s, *A.shape[2:]), A[:, :T - s]], 1)
        else:
            A = A * F.pad(A, shift, value=1.0)[:, :T]
        s *= 2
    return b


@dataclass(frozen=True)
class Recurrence:
    """``kernel(A, b) -> h`` (all states, forward along dim 1); ``adjoint(A)``: the reverse scan's coefficients in
    forward time order (``A_{t+1}^T``, zero after the end); ``coefficient_grad(db, h_prev)``: ``dA``."""
    kernel: Callable
    adjoint: Callable
    coefficient_grad: Callable


class _Scan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rec: Recurrence, A, b):
        h = rec.kernel(A, b)
        ctx.rec = rec
        ctx.save_for_backward(A, h)
        return h

    @staticmethod
    def backward(ctx, g):
        A, h = ctx.saved_tensors
        rec = ctx.rec
        db = rec.kernel(rec.adjoint(A).flip(1), g.contiguous().flip(1)).flip(1)
        return None, rec.coefficient_grad(db, previous(h)), db


def differentiable_scan(rec: Recurrence, A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """All states of the recurrence ``rec`` from ``A`` and ``b``, differentiable in both (module text); without
    gradients, the forward kernel alone."""
    if torch.is_grad_enabled() and (A.requires_grad or b.requires_grad):
        return _Scan.apply(rec, A, b)
    return rec.kernel(A, b)
