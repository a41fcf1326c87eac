"""The output stage of the chunked GH product (:mod:`.wy`): O = diag(gamma) Q S_0 + M U' of one chunk
(:func:`_chunk_output`), called inside the one-pass forward's state pass (:mod:`.wy_state`) or, for the split
forward, by the chunk-parallel :func:`_output_kernel` from the stored chunk states and U' (kernel 3)."""
from __future__ import annotations

import torch

from .._triton import tl, triton
from .tiles import _dot
from .wy_common import _chunk_gates, _chunk_program, _o, _or


@triton.jit
def _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, causal, kk, Sd, und, G, H: tl.constexpr,
                  K: tl.constexpr, V: tl.constexpr, NH, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                  EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr):
    """One chunk's outputs for one value block, stored at its query rows (each token's last position):
    O = diag(gamma) Q S_0 + M U', M = (Q K^T) * Gamma on and below the diagonal (``causal``); Sd, und are S_0 and
    U' as dot operands, G the in-chunk cumulative log-gate (read only when HAS_G). The one-pass forward calls it
    inside the state pass, the split forward from :func:`_output_kernel`."""
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0).to(ACC) * scale
    qk = _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
    if HAS_G:
        qk = qk * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
        qq = qq * tl.exp(G)[:, None]
    qk = tl.where(causal, qk, 0.0)
    o = _dot(_o(qq, DT, ACC, EMU, RND), Sd, PREC, ACC) + _dot(_o(qk, DT, ACC, EMU, RND), und, PREC, ACC)
    tl.store(o_ptr + trow[:, None] * V + rv[None, :], o.to(o_ptr.dtype.element_ty), mask=isq[:, None] & mv[None, :])


@triton.jit
def _output_kernel(q_ptr, k_ptr, Gc_ptr, h_ptr, vn_ptr, o_ptr, scale_ptr, chunks_ptr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr, BK: tl.constexpr,
                   BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
                   RND: tl.constexpr, HAS_G: tl.constexpr):
    """Chunk-parallel outputs from the stored chunk states and U' (:func:`_chunk_program`, blocks of values):
    O = diag(gamma) Q S_0 + M U', M = (Q K^T) * Gamma on and below the diagonal. The split forward: the state
    pass then carries only S (three products per chunk instead of five), which is what float32 tiles need."""
    i_n, i_v, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, tl.cdiv(V, BV), BT)
    rk = tl.arange(0, BK)
    mk = rk < K
    rv = i_v * BV + tl.arange(0, BV)
    mv = rv < V
    row = pos * H + i_h
    scale = tl.load(scale_ptr).to(ACC)
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0).to(ACC)
    S = tl.load(h_ptr + ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :], mask=mk[:, None] & mv[None, :],
                other=0.0)
    un = tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0)
    if HAS_G:
        G, _ = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
    _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, r[:, None] >= r[None, :], kk,
                  _o(S, DT, ACC, EMU, RND), _o(un, DT, ACC, EMU, RND), G if HAS_G else scale, H, K, V, NH, DT, ACC,
                  PREC, EMU, RND, HAS_G)


def _output_pass(c, qf, kf, Gc, h, vn, scale_t):
    """o from the stored chunk states and U' (:func:`_output_kernel`, chunk-parallel)."""
    o = torch.empty(c.Ltok, c.H, c.V, dtype=qf.dtype, device=c.dev)   # every token row is written
    BV, nw, ns = c.bv("output")
    if c.NT:
        _output_kernel[(c.NT * triton.cdiv(c.V, BV), c.H)](
            qf, kf, _or(Gc, kf), h, vn, o, scale_t, c.chunks, *c.consts(), c.BK, BV, *c.types(), c.has_g,
            num_warps=nw, num_stages=ns)
    return o
