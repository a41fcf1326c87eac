"""Differentiable diagonal scan ``h_t = a_t * h_{t-1} + b_t`` (``h_{-1} = 0``) on a parallel kernel, forward and
backward (the backward of a linear recurrence is the same recurrence run in reverse).

With ``g = dL/dh``: ``db_t = g_t + a_{t+1} db_{t+1}`` (a reverse scan with the coefficients shifted by one step) and
``da_t = db_t h_{t-1}`` (:mod:`lrnnkit.ops.linear_scan`). Both passes run the forward kernel: on CUDA the
chunk-parallel Triton scan (:mod:`.chunk`); elsewhere torch, either step by step (:func:`sequential_scan`: one fused
multiply-add a step into the output, each number moved about twice) or by log-depth doubling
(:func:`lrnnkit.ops.linear_scan.doubling_scan`: ``ceil(log2 T)`` steps of several full-size tensors each), chosen by
:func:`cpu_kernel`: step by step where a step holds :data:`SEQUENTIAL_MIN_STEP` numbers or more or the sequence has at
most :data:`SEQUENTIAL_MAX_T` steps, where the per-step overhead of a Python loop is small beside the doubling's
extra passes (the CPU timings of ``benchmarks/bench_cpu_scan.py``, RESULTS.md "CPU diagonal scan"); the Triton
interpreter is far too slow to train with. ``a_t = 0`` resets the state, which is how packed
sequences (``cu_seqlens``) are kept apart: the reverse pass then sees ``a_{t+1} = 0`` at each sequence's last token.
Reference: :func:`.naive.diagonal_scan_naive` (tests compare values and gradients)."""
from __future__ import annotations

import math

import torch

from ..linear_scan import Recurrence, differentiable_scan, doubling_scan, following

__all__ = ["cpu_kernel", "diagonal_scan", "doubling_scan", "sequential_scan"]

#: off CUDA, :func:`_kernel` runs :func:`sequential_scan` when one step of the sequence holds at least this many
#: numbers (rows x channels) ...
SEQUENTIAL_MIN_STEP = 1024
#: ... or the sequence has at most this many steps; else :func:`lrnnkit.ops.linear_scan.doubling_scan`
SEQUENTIAL_MAX_T = 64


def sequential_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h`` of ``h_t = a_t h_{t-1} + b_t`` (``h_{-1} = 0``) along dim 1, step by step: ``h_t`` written into the
    output by one fused multiply-add from ``h_{t-1}`` (``a``, ``b`` of one shape (B, T, ...), or ``a`` broadcasting
    against ``b``). Not differentiable by autograd (it writes into its output): :func:`diagonal_scan` gives it
    gradients."""
    h = torch.empty_like(b)
    if b.shape[1]:
        h[:, 0] = b[:, 0]
    for t in range(1, b.shape[1]):
        torch.addcmul(b[:, t], a[:, t], h[:, t - 1], out=h[:, t])
    return h


def cpu_kernel(shape) -> str:
    """The torch kernel that scans inputs of ``shape`` (B, T, ...) off CUDA: ``"sequential"``
    (:func:`sequential_scan`) when a step holds at least :data:`SEQUENTIAL_MIN_STEP` numbers or there are at most
    :data:`SEQUENTIAL_MAX_T` steps, else ``"doubling"`` (:func:`lrnnkit.ops.linear_scan.doubling_scan`)."""
    T, numel = shape[1], math.prod(shape)
    return "sequential" if T <= SEQUENTIAL_MAX_T or numel >= SEQUENTIAL_MIN_STEP * T else "doubling"


def _kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_cuda:
        from .chunk import diagonal_scan_chunk
        return diagonal_scan_chunk(a.contiguous(), b.contiguous(), validate=False)
    return (sequential_scan if cpu_kernel(b.shape) == "sequential" else doubling_scan)(a, b)


#: the diagonal recurrence's backward rules (:mod:`lrnnkit.ops.linear_scan`); ``_kernel`` looked up at each call
_RECURRENCE = Recurrence(kernel=lambda a, b: _kernel(a, b), adjoint=following,
                         coefficient_grad=lambda db, h_prev: db * h_prev)


def diagonal_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h`` (B, T, D) of ``h_t = a_t h_{t-1} + b_t`` from a, b (B, T, D) of one float dtype; differentiable in
    both (module text). No range check: callers pass ``a`` in [-1, 1] (the chunk kernel's domain)."""
    return differentiable_scan(_RECURRENCE, a, b)
