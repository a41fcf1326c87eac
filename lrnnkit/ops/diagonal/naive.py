"""Naive torch reference of the diagonal layer (paper 000, eq. 1 with ``A(x) = diag(a(x))``; Mamba-style,
eigenvalue range extended to [-1, 1] as in 000, Table 2): ``h_t = a_t * h_{t-1} + b_t`` elementwise, all states
returned. ``a`` outside [-1, 1] is refused (the stability / finite-precision statements assume it)."""
from __future__ import annotations

import torch

from .._checks import acc_dtype, check_float, check_range, check_shape
from ...errors import InputError


def prepare(a, b, h0=None, validate: bool = True):
    if not isinstance(a, torch.Tensor) or a.ndim != 3:
        raise InputError(f"a: expected a (B, T, D) tensor, got {getattr(a, 'shape', type(a).__name__)}")
    check_shape("b", b, tuple(a.shape))
    if h0 is not None:
        check_shape("h0", h0, (a.shape[0], a.shape[2]))
    if validate:
        check_float("a", a)
        check_float("b", b, a.dtype)
        if h0 is not None:
            check_float("h0", h0)
        check_range("a", a, -1.0, 1.0)


def diagonal_scan_naive(a, b, h0=None, *, validate: bool = True):
    """a, b: (B, T, D); h0: (B, D) or None (zeros). Returns all states (B, T, D) in a's dtype."""
    prepare(a, b, h0, validate)
    dt = acc_dtype(a.dtype)
    B, T, D = a.shape
    h = h0.to(dt) if h0 is not None else torch.zeros(B, D, dtype=dt, device=a.device)
    out = []
    af, bf = a.to(dt), b.to(dt)
    for t in range(T):
        h = af[:, t] * h + bf[:, t]
        out.append(h)
    return (torch.stack(out, 1) if out else torch.zeros(B, 0, D, dtype=dt, device=a.device)).to(a.dtype)
