"""Naive torch reference of the block-diagonal layer (paper 002, the block-diagonal input-dependent LRNN):
``h_t[blk] = A_t[blk] h_{t-1}[blk] + b_t[blk]`` for each of NB blocks of size BS. Inputs: ``A`` (B, T, NB, BS, BS),
``b`` (B, T, NB, BS), ``h0`` (B, NB, BS) or None. Paper 002 keeps the blocks stable by a column p-norm
normalization; this layer takes the blocks as given and refuses non-finite input. Returns states (B, T, NB, BS)."""
from __future__ import annotations

import torch

from ...errors import InputError
from .._checks import acc_dtype, check_float, check_shape


def prepare(A, b, h0=None, validate: bool = True):
    if not isinstance(A, torch.Tensor) or A.ndim != 5 or A.shape[-1] != A.shape[-2]:
        raise InputError(f"A: expected a (B, T, NB, BS, BS) tensor of square blocks, got "
                         f"{getattr(A, 'shape', type(A).__name__)}")
    check_shape("b", b, tuple(A.shape[:-1]))
    if h0 is not None:
        check_shape("h0", h0, (A.shape[0], A.shape[2], A.shape[3]))
    if validate:
        check_float("A", A)
        check_float("b", b, A.dtype)
        if h0 is not None:
            check_float("h0", h0)


def block_diagonal_scan_naive(A, b, h0=None, *, validate: bool = True):
    prepare(A, b, h0, validate)
    dt = acc_dtype(A.dtype)
    B, T, NB, BS, _ = A.shape
    h = h0.to(dt) if h0 is not None else torch.zeros(B, NB, BS, dtype=dt, device=A.device)
    Af, bf = A.to(dt), b.to(dt)
    out = []
    for t in range(T):
        h = torch.einsum("bnij,bnj->bni", Af[:, t], h) + bf[:, t]
        out.append(h)
    return (torch.stack(out, 1) if out else torch.zeros(B, 0, NB, BS, dtype=dt, device=A.device)).to(A.dtype)
