"""Fused recurrent Triton kernel of the block-diagonal layer (reference: :mod:`.naive`): one program per (batch
row, block), the block's state (BS) in registers, ``h <- A_t h + b_t`` as a broadcast multiply and row sums."""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import TL_DTYPE, check_device, tl, triton
from .naive import prepare


@triton.jit
def _block_fused_kernel(a_ptr, b_ptr, h0_ptr, o_ptr, T, NB: tl.constexpr, BS: tl.constexpr, BB: tl.constexpr,
                        ACC: tl.constexpr, HAS_H0: tl.constexpr):
    i_b = tl.program_id(0)      # rows on the first grid axis (up to 2^31 - 1 programs; the second allows 65535)
    i_n = tl.program_id(1)
    r = tl.arange(0, BB)
    m = r < BS
    if HAS_H0:
        h = tl.load(h0_ptr + (i_b * NB + i_n) * BS + r, mask=m, other=0.0).to(ACC)
    else:
        h = tl.zeros([BB], dtype=ACC)
    for t in range(T):
        base = (i_b * T + t) * NB + i_n
        Am = tl.load(a_ptr + base * BS * BS + r[:, None] * BS + r[None, :], mask=m[:, None] & m[None, :],
                     other=0.0).to(ACC)
        h = tl.sum(Am * h[None, :], 1) + tl.load(b_ptr + base * BS + r, mask=m, other=0.0).to(ACC)
        tl.store(o_ptr + base * BS + r, h.to(o_ptr.dtype.element_ty), mask=m)


def block_diagonal_scan_fused(A, b, h0=None, *, validate: bool = True):
    prepare(A, b, h0, validate)
    check_device(A, b, h0)
    B, T, NB, BS, _ = A.shape
    o = torch.empty_like(b)
    if B and T and NB:
        Ac, bc = A.contiguous(), b.contiguous()
        _block_fused_kernel[(B, NB)](Ac, bc, h0.contiguous() if h0 is not None else bc, o, T, NB, BS,
                                    max(2, triton.next_power_of_2(BS)), TL_DTYPE[acc_dtype(A.dtype)], h0 is not None)
    return o
