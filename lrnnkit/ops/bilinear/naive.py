"""Naive torch reference of the bilinear layer (paper 004, "bi-linear state transitions"; the extraction lost
its formulas: reconstructed as the standard bilinear RNN ``h_t = W(x_t) h_{t-1}`` whose transition is linear in
the input, ``W(x) = sum_i x_i W_i`` for a 3-tensor ``W`` (Din, d, d), plus an optional additive input term
``b_t``; with one-hot x this is the one-hot FSM simulation of paper 004, ``W_i`` the letter matrices).
Inputs: ``x`` (B, T, Din), ``W`` (Din, d, d), ``b`` (B, T, d) or None, ``h0`` (B, d) or None (then e_0 is NOT
assumed: zeros; give h0 for a homogeneous recurrence). Returns all states (B, T, d)."""
from __future__ import annotations

import torch

from ...errors import InputError
from .._checks import acc_dtype, check_float, check_shape


def prepare(x, W, b=None, h0=None, validate: bool = True):
    if not isinstance(x, torch.Tensor) or x.ndim != 3:
        raise InputError(f"x: expected a (B, T, Din) tensor, got {getattr(x, 'shape', type(x).__name__)}")
    if not isinstance(W, torch.Tensor) or W.ndim != 3 or W.shape[1] != W.shape[2] or W.shape[0] != x.shape[2]:
        raise InputError(f"W: expected a (Din={x.shape[2]}, d, d) tensor, got {getattr(W, 'shape', None)}")
    B, T, _ = x.shape
    d = W.shape[1]
    if b is not None:
        check_shape("b", b, (B, T, d))
    if h0 is not None:
        check_shape("h0", h0, (B, d))
    if validate:
        check_float("x", x)
        check_float("W", W, x.dtype)
        for name, t in (("b", b), ("h0", h0)):
            if t is not None:
                check_float(name, t)


def bilinear_scan_naive(x, W, b=None, h0=None, *, validate: bool = True):
    prepare(x, W, b, h0, validate)
    dt = acc_dtype(x.dtype)
    B, T, _ = x.shape
    d = W.shape[1]
    h = h0.to(dt) if h0 is not None else torch.zeros(B, d, dtype=dt, device=x.device)
    xf, Wf = x.to(dt), W.to(dt)
    out = []
    for t in range(T):
        h = torch.einsum("bi,ijk,bk->bj", xf[:, t], Wf, h)
        if b is not None:
            h = h + b[:, t].to(dt)
        out.append(h)
    return (torch.stack(out, 1) if out else torch.zeros(B, 0, d, dtype=dt, device=x.device)).to(x.dtype)
