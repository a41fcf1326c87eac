"""The T pass of the chunked GH product (:mod:`.wy`, kernel 1): per chunk, chunk-parallel, the in-chunk cumulative
log-gate G and T = (I + A)^{-1}, A = strictly_lower(diag(b) K K^T * Gamma) (the WY representation's triangular
factor; the blocked inverse is :func:`.tiles._tinv`). The state passes and the backward read T back."""
from __future__ import annotations

import torch

from .._triton import tl, triton
from .tiles import _dot, _tinv
from .wy_common import _chunk_program, _gates, _o, _or


@triton.jit
def _t_kernel(k_ptr, b_ptr, g_ptr, Gc_ptr, t_ptr, chunks_ptr, H: tl.constexpr, K: tl.constexpr, NH,
              BT: tl.constexpr, BK: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
              EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, BLOCKED: tl.constexpr,
              TSUB: tl.constexpr):
    """Chunk-parallel: G (stored when gated) and T = (I + A)^{-1}, stored rounded to the storage dtype exactly as
    the dots use it (C numbers per position, as fla keeps its A)."""
    _, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    rk = tl.arange(0, BK)
    row = pos * H + i_h
    mkk = mp[:, None] & (rk[None, :] < K)
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    low = r[:, None] > r[None, :]
    A = _dot(_o(kk * bb[:, None], DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
    if HAS_G:
        G = _gates(g_ptr, Gc_ptr, pos, mp, i_h, H, NH, ACC)
        A = A * tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    A = tl.where(low, A, 0.0)
    Tm = _o(_tinv(A, BT, ACC, PREC, BLOCKED, TSUB), DT, ACC, EMU, RND)
    tl.store(t_ptr + row[:, None] * BT + r[None, :], Tm.to(t_ptr.dtype.element_ty), mask=mp[:, None])


def _t_pass(c, kf, bf, gf):
    """G (gated) and T (L, H, BT), one chunk-parallel launch."""
    L = kf.shape[0]
    Gc = torch.empty(L, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None
    tm = torch.empty(L, c.H, c.BT, dtype=c.ST, device=c.dev)
    if c.NT:
        _t_kernel[(c.NT, c.H)](kf, bf, _or(gf, bf), _or(Gc, bf), tm, c.chunks, c.H, c.K, c.NH, c.BT, c.BK,
                               *c.types(), c.has_g, c.BLOCKED, c.cfg["t_sub"], num_warps=c.cfg["t_warps"])
    return Gc, tm
