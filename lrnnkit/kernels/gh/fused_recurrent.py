"""Fused recurrent Triton kernel of the GH-product layer (DeltaNet n_h = 1, DeltaProduct n_h > 1).

One program per (batch, head, block of BV value columns) keeps its K x BV slice of the state S on chip (registers,
accumulated in float32, or float64 for float64 inputs) and walks the sequence, applying per token the optional gate
``S <- exp(g_t) S`` and then the n_h steps ``S <- S + beta_j k_j (v_j - S^T k_j)^T`` (= ``(I - beta_j k_j k_j^T) S
+ beta_j k_j v_j^T``, paper 001), and writes ``o_t = scale * S^T q_t``. Columns of S evolve independently, so
splitting V over programs is exact. For inference and the small widths of compiled models (no backward: use
:func:`lrnnkit.kernels.gh.chunk_gh` for training). Reference: :func:`lrnnkit.kernels.gh.naive.delta_product_naive`.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .._checks import acc_dtype
from .._triton import TL_DTYPE, check_device, tl, triton
from .inputs import prepare


@triton.jit
def _gh_fused_recurrent_kernel(q_ptr, k_ptr, v_ptr, b_ptr, g_ptr, h0_ptr, o_ptr, ht_ptr, scale_ptr,
                               T, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH: tl.constexpr,
                               BK: tl.constexpr, BV: tl.constexpr, ACC: tl.constexpr,
                               HAS_G: tl.constexpr, HAS_H0: tl.constexpr, STORE_HT: tl.constexpr):
    i_v = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    rk = tl.arange(0, BK)
    rv = i_v * BV + tl.arange(0, BV)
    mk = rk < K
    mv = rv < V
    mkv = mk[:, None] & mv[None, :]
    scale = tl.load(scale_ptr).to(ACC)   # a tensor, not a float argument: Triton passes floats as fp32
    if HAS_H0:
        S = tl.load(h0_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :], mask=mkv, other=0.0).to(ACC)
    else:
        S = tl.zeros([BK, BV], dtype=ACC)
    for t in range(T):
        if HAS_G:
            gt = tl.load(g_ptr + (i_b * T + t) * H + i_h).to(ACC)
            S = S * tl.exp(gt)
        for j in tl.static_range(NH):
            row = ((i_b * T + t) * NH + j) * H + i_h
            kj = tl.load(k_ptr + row * K + rk, mask=mk, other=0.0).to(ACC)
            vj = tl.load(v_ptr + row * V + rv, mask=mv, other=0.0).to(ACC)
            bj = tl.load(b_ptr + row).to(ACC)
            kS = tl.sum(kj[:, None] * S, 0)
            S = S + (bj * kj)[:, None] * (vj - kS)[None, :]
        qt = tl.load(q_ptr + ((i_b * T + t) * H + i_h) * K + rk, mask=mk, other=0.0).to(ACC)
        ot = tl.sum(qt[:, None] * S, 0) * scale
        tl.store(o_ptr + ((i_b * T + t) * H + i_h) * V + rv, ot.to(o_ptr.dtype.element_ty), mask=mv)
    if STORE_HT:
        tl.store(ht_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :], S.to(ht_ptr.dtype.element_ty),
                 mask=mkv)


def fused_recurrent_delta_product(q, k, v, beta, g=None, *, scale: float | None = None, initial_state=None,
                                  output_final_state: bool = False, normalize: bool = False,
                                  validate: bool = True, block_v: int | None = None, num_warps: int | None = None):
    """Same contract as :func:`lrnnkit.kernels.gh.naive.delta_product_naive` (returns ``(o, final_state)``),
    computed by the fused recurrent Triton kernel (``scale`` defaults to ``K ** -0.5``). Not differentiable
    (raises if an input requires grad)."""
    x = prepare(q, k, v, beta, g, initial_state, normalize=normalize, validate=validate)
    if any(t is not None and t.requires_grad for t in (x.q, x.k, x.v, x.beta, x.g, x.h0)) and torch.is_grad_enabled():
        raise InputError("fused_recurrent_delta_product has no backward; train with chunk_gh or DeltaProductLayer")
    check_device(x.q, x.k, x.v, x.beta, x.g, x.h0)
    B, T, H, K, V = x.dims
    scale = K ** -0.5 if scale is None else scale
    acc = acc_dtype(q.dtype)
    BK = triton.next_power_of_2(K)
    # H200 sweep (benchmarks/bench_kernels.py): many small programs of one warp win; BV = 16 at K = 128, 8 at K = 16
    BV = block_v or min(triton.next_power_of_2(V), 16 if BK >= 64 else 8)
    qc, kc, vc = x.q.contiguous(), x.k.contiguous(), x.v.contiguous()
    bc = x.beta.contiguous()
    gc = x.g.contiguous() if x.g is not None else qc
    h0 = x.h0.contiguous() if x.h0 is not None else qc
    o = torch.empty(B, T, H, V, dtype=q.dtype, device=q.device)
    ht = torch.empty(B, H, K, V, dtype=acc, device=q.device) if output_final_state else o
    grid = (triton.cdiv(V, BV), B * H)
    sc = torch.tensor([scale], dtype=acc, device=q.device)
    nw = num_warps or (1 if BK * BV <= 2048 else 2 if BK * BV <= 4096 else 4 if BK * BV <= 8192 else 8)
    _gh_fused_recurrent_kernel[grid](qc, kc, vc, bc, gc, h0, o, ht, sc, T, H, K, V, x.n_h, BK, BV,
                                     TL_DTYPE[acc], x.g is not None, x.h0 is not None, output_final_state,
                                     num_warps=nw)
    return o, (ht if output_final_state else None)
