"""Fused recurrent Triton kernel of the diagonal layer (reference: :mod:`.naive`): one program per (batch row,
block of BD channels), state in registers (float32, float64 for float64 inputs), one pass over the sequence."""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import TL_DTYPE, check_device, tl, triton
from .naive import prepare


@triton.jit
def _diag_fused_kernel(a_ptr, b_ptr, h0_ptr, o_ptr, T, D: tl.constexpr, BD: tl.constexpr, ACC: tl.constexpr,
                       HAS_H0: tl.constexpr):
    i_b = tl.program_id(0)      # rows on the first grid axis (up to 2^31 - 1 programs; the second allows 65535)
    i_d = tl.program_id(1)
    rd = i_d * BD + tl.arange(0, BD)
    md = rd < D
    if HAS_H0:
        h = tl.load(h0_ptr + i_b * D + rd, mask=md, other=0.0).to(ACC)
    else:
        h = tl.zeros([BD], dtype=ACC)
    for t in range(T):
        off = (i_b * T + t) * D + rd
        h = tl.load(a_ptr + off, mask=md, other=0.0).to(ACC) * h + tl.load(b_ptr + off, mask=md, other=0.0).to(ACC)
        tl.store(o_ptr + off, h.to(o_ptr.dtype.element_ty), mask=md)


def diagonal_scan_fused(a, b, h0=None, *, validate: bool = True, block_d: int | None = None):
    prepare(a, b, h0, validate)
    check_device(a, b, h0)
    B, T, D = a.shape
    BD = block_d or min(triton.next_power_of_2(D), 256)
    o = torch.empty_like(a)
    if B and T:
        ac, bc = a.contiguous(), b.contiguous()
        _diag_fused_kernel[(B, triton.cdiv(D, BD))](ac, bc, h0.contiguous() if h0 is not None else ac, o, T, D, BD,
                                                   TL_DTYPE[acc_dtype(a.dtype)], h0 is not None)
    return o
