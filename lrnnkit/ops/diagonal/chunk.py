"""Chunk-parallel Triton kernel of the diagonal layer by an associative scan (paper 002's parallel scan).

The affine maps ``h -> a h + b`` compose associatively: ``(a1, b1) then (a2, b2) = (a2 a1, a2 b1 + b2)``. Each
program scans a chunk of BT steps for BD channels with ``tl.associative_scan`` (log-depth), folding in the carry
from the previous chunk, so the sequential dependency is one multiply-add per chunk instead of per step.
Rounding differs from the sequential loop (products are re-associated); float32 results agree with the naive
reference to a few ulps times log2(BT) per chunk. Reference: :mod:`.naive`.
"""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import TL_DTYPE, check_device, tl, triton
from .naive import prepare


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    return a2 * a1, a2 * b1 + b2


@triton.jit
def _diag_chunk_kernel(a_ptr, b_ptr, h0_ptr, o_ptr, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr,
                       ACC: tl.constexpr, HAS_H0: tl.constexpr):
    i_b = tl.program_id(0)      # rows on the first grid axis (up to 2^31 - 1 programs; the second allows 65535)
    i_d = tl.program_id(1)
    rd = i_d * BD + tl.arange(0, BD)
    rt = tl.arange(0, BT)
    md = rd < D
    if HAS_H0:
        h = tl.load(h0_ptr + i_b * D + rd, mask=md, other=0.0).to(ACC)
    else:
        h = tl.zeros([BD], dtype=ACC)
    for c in range(tl.cdiv(T, BT)):
        pos = c * BT + rt
        m = (pos < T)[:, None] & md[None, :]
        off = (i_b * T + pos)[:, None] * D + rd[None, :]
        av = tl.load(a_ptr + off, mask=m, other=1.0).to(ACC)
        bv = tl.load(b_ptr + off, mask=m, other=0.0).to(ACC)
        pa, pb = tl.associative_scan((av, bv), 0, _affine_combine)
        hs = pa * h[None, :] + pb
        tl.store(o_ptr + off, hs.to(o_ptr.dtype.element_ty), mask=m)
        h = tl.sum(tl.where(rt[:, None] == BT - 1, hs, 0.0), 0)


def diagonal_scan_chunk(a, b, h0=None, *, validate: bool = True, chunk_size: int = 64, block_d: int | None = None):
    prepare(a, b, h0, validate)
    check_device(a, b, h0)
    B, T, D = a.shape
    BD = block_d or min(triton.next_power_of_2(D), 64)
    o = torch.empty_like(a)
    if B and T:
        ac, bc = a.contiguous(), b.contiguous()
        _diag_chunk_kernel[(B, triton.cdiv(D, BD))](ac, bc, h0.contiguous() if h0 is not None else ac, o, T, D,
                                                   chunk_size, BD, TL_DTYPE[acc_dtype(a.dtype)], h0 is not None)
    return o
