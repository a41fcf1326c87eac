"""Fused recurrent Triton kernel of the bilinear layer (reference: :mod:`.naive`): one program per batch row,
state (d) in registers; per step ``h <- sum_i x_i (W_i h) + b_t``, the slices W_i read from cache."""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import TL_DTYPE, check_device, tl, triton
from .naive import prepare


@triton.jit
def _bilinear_fused_kernel(x_ptr, w_ptr, b_ptr, h0_ptr, o_ptr, T, DIN: tl.constexpr, D: tl.constexpr,
                           BD: tl.constexpr, ACC: tl.constexpr, HAS_B: tl.constexpr, HAS_H0: tl.constexpr):
    i_b = tl.program_id(0)
    r = tl.arange(0, BD)
    m = r < D
    if HAS_H0:
        h = tl.load(h0_ptr + i_b * D + r, mask=m, other=0.0).to(ACC)
    else:
        h = tl.zeros([BD], dtype=ACC)
    for t in range(T):
        hn = tl.zeros([BD], dtype=ACC)
        for i in range(DIN):
            xi = tl.load(x_ptr + (i_b * T + t) * DIN + i).to(ACC)
            Wi = tl.load(w_ptr + i * D * D + r[:, None] * D + r[None, :], mask=m[:, None] & m[None, :],
                         other=0.0).to(ACC)
            hn += xi * tl.sum(Wi * h[None, :], 1)
        if HAS_B:
            hn += tl.load(b_ptr + (i_b * T + t) * D + r, mask=m, other=0.0).to(ACC)
        h = hn
        tl.store(o_ptr + (i_b * T + t) * D + r, h.to(o_ptr.dtype.element_ty), mask=m)


def bilinear_scan_fused(x, W, b=None, h0=None, *, validate: bool = True):
    prepare(x, W, b, h0, validate)
    check_device(x, W, b, h0)
    B, T, DIN = x.shape
    d = W.shape[1]
    o = torch.empty(B, T, d, dtype=x.dtype, device=x.device)
    if B and T:
        xc, Wc = x.contiguous(), W.contiguous()
        _bilinear_fused_kernel[(B,)](xc, Wc, b.contiguous() if b is not None else xc,
                                     h0.contiguous() if h0 is not None else xc, o, T, DIN, d,
                                     max(2, triton.next_power_of_2(d)), TL_DTYPE[acc_dtype(x.dtype)],
                                     b is not None, h0 is not None)
    return o
