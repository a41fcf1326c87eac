"""The chunk-state stage of the chunked GH product (:mod:`.wy`): the sequential passes over one sequence's chunks.
Forward (kernel 2, :func:`_state_fwd_kernel`): S_C = gamma_C S_0 + Kd^T U' chunk after chunk, storing the outputs
(the one-pass forward), or S_n and U' (the split forward and the backward's recompute), and the final state.
Reverse (kernel 4, :func:`_state_bwd_kernel`): dS chunk after chunk, storing dS_n, dY = T^T dU' and dS_0."""
from __future__ import annotations

import torch

from .._triton import tl, triton
from .tiles import _dot
from .wy_common import _chunk_gates, _o, _or, _seq_program
from .wy_output import _chunk_output


@triton.jit
def _state_fwd_kernel(q_ptr, k_ptr, v_ptr, b_ptr, t_ptr, Gc_ptr, h0_ptr, o_ptr, ht_ptr, h_ptr, vn_ptr, scale_ptr,
                      seqs_ptr, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, HAS_H0: tl.constexpr,
                      OUTPUT: tl.constexpr, STORE: tl.constexpr, FINAL: tl.constexpr):
    """Sequential over one sequence's chunks: OUTPUT writes o, STORE writes S_n and U', FINAL the final state.
    U' = U - W S_0 = T (diag(b) (V - diag(gamma) K S_0)) from T, v and b: W and U never go through memory (the
    cancellation V - gamma K S_0 happens in the accumulator, before any rounding)."""
    i_h, bos, eos, coff, rk, rv, mk, mv, mkv, soff, S = _seq_program(seqs_ptr, h0_ptr, H, K, V, BK, BV, ACC, HAS_H0)
    r = tl.arange(0, BT)
    scale = tl.load(scale_ptr).to(ACC)
    causal = r[:, None] >= r[None, :]
    NC = tl.cdiv(eos - bos, BT)
    for c in range(NC):
        pos = bos + c * BT + r
        mp = pos < eos
        row = pos * H + i_h
        mkk = mp[:, None] & mk[None, :]
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        if HAS_G:
            G, GL = _chunk_gates(Gc_ptr, row, mp, tl.minimum(bos + c * BT + BT, eos) - 1, i_h, H, ACC)
        if STORE:
            tl.store(h_ptr + (((coff + c) * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                     S.to(h_ptr.dtype.element_ty), mask=mkv)
        Sd = _o(S, DT, ACC, EMU, RND)
        mpv = mp[:, None] & mv[None, :]
        tt = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0), DT, ACC, EMU, RND)
        vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
        bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
        ks = _dot(_o(kk, DT, ACC, EMU, RND), Sd, PREC, ACC)
        if HAS_G:
            ks = ks * tl.exp(G)[:, None]
        un = _dot(tt, _o((vv - ks) * bb[:, None], DT, ACC, EMU, RND), PREC, ACC)
        if STORE:
            tl.store(vn_ptr + row[:, None] * V + rv[None, :], un.to(vn_ptr.dtype.element_ty), mask=mpv)
        und = _o(un, DT, ACC, EMU, RND)
        if OUTPUT:
            _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, causal, kk, Sd, und,
                          G if HAS_G else scale, H, K, V, NH, DT, ACC, PREC, EMU, RND, HAS_G)
        if HAS_G:
            kd = kk * tl.exp(GL - G)[:, None]
            S = S * tl.exp(GL) + _dot(_o(kd, DT, ACC, EMU, RND), und, PREC, ACC, True, False)
        else:
            S = S + _dot(_o(kk, DT, ACC, EMU, RND), und, PREC, ACC, True, False)
    if FINAL:
        tl.store(ht_ptr + soff, S.to(ht_ptr.dtype.element_ty), mask=mkv)


@triton.jit
def _state_bwd_kernel(q_ptr, k_ptr, b_ptr, t_ptr, Gc_ptr, do_ptr, dht_ptr, dh_ptr, dy_ptr, dv_ptr, dh0_ptr,
                      scale_ptr, seqs_ptr, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, HAS_DHT: tl.constexpr,
                      DV: tl.constexpr):
    """Reverse over one sequence's chunks: stores dS (gradient of the state after chunk n) and
    dY = T^T dU', dU' = M^T dO + Kd dS; then dS <- gamma_C dS + (diag(gamma) Q)^T dO - W^T dU', with
    W^T dU' = K^T diag(b gamma) dY formed from T (W is never stored). dY, not dU', is what the later kernels take:
    dX = T^T dW = -dY S_0^T needs no further product with T. dV = diag(b) dY is written here, from dY before it is
    rounded for storage (2-byte inputs: from the stored dY, dv's error grew past fla's)."""
    i_h, bos, eos, coff, rk, rv, mk, mv, mkv, soff, dS = _seq_program(seqs_ptr, dht_ptr, H, K, V, BK, BV, ACC,
                                                                       HAS_DHT)
    r = tl.arange(0, BT)
    scale = tl.load(scale_ptr).to(ACC)
    upper = r[:, None] <= r[None, :]     # (M^T)[j, i] lives at i >= j
    NC = tl.cdiv(eos - bos, BT)
    for cc in range(NC):
        c = NC - 1 - cc
        tl.store(dh_ptr + (((coff + c) * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                 dS.to(dh_ptr.dtype.element_ty), mask=mkv)
        pos = bos + c * BT + r
        mp = pos < eos
        row = pos * H + i_h
        mkk = mp[:, None] & mk[None, :]
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        isq = mp & ((pos % NH) == (NH - 1))
        trow = (pos // NH) * H + i_h
        qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0)
        qq = qq.to(ACC) * scale
        do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
                 DT, ACC, EMU, RND)
        kq = _dot(_o(kk, DT, ACC, EMU, RND), _o(qq, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dSd = _o(dS, DT, ACC, EMU, RND)
        if HAS_G:
            G, GL = _chunk_gates(Gc_ptr, row, mp, tl.minimum(bos + c * BT + BT, eos) - 1, i_h, H, ACC)
            kq = kq * tl.exp(tl.where(upper, G[None, :] - G[:, None], 0.0))
            kd = kk * tl.exp(GL - G)[:, None]
            qq = qq * tl.exp(G)[:, None]
        else:
            kd = kk
        kq = tl.where(upper, kq, 0.0)
        dun = _dot(_o(kq, DT, ACC, EMU, RND), do, PREC, ACC) \
            + _dot(_o(kd, DT, ACC, EMU, RND), dSd, PREC, ACC)
        dund = _o(dun, DT, ACC, EMU, RND)
        tt = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0), DT, ACC, EMU, RND)
        bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
        y = _dot(tt, dund, PREC, ACC, True, False)
        tl.store(dy_ptr + row[:, None] * V + rv[None, :], y.to(dy_ptr.dtype.element_ty),
                 mask=mp[:, None] & mv[None, :])
        if DV:
            tl.store(dv_ptr + row[:, None] * V + rv[None, :], (y * bb[:, None]).to(dv_ptr.dtype.element_ty),
                     mask=mp[:, None] & mv[None, :])
        if HAS_G:
            bb = bb * tl.exp(G)
        wdu = _dot(_o(kk * bb[:, None], DT, ACC, EMU, RND), _o(y, DT, ACC, EMU, RND), PREC, ACC, True, False)
        upd = _dot(_o(qq, DT, ACC, EMU, RND), do, PREC, ACC, True, False) - wdu
        if HAS_G:
            dS = dS * tl.exp(GL) + upd
        else:
            dS = dS + upd
    tl.store(dh0_ptr + soff, dS.to(dh0_ptr.dtype.element_ty), mask=mkv)


def _state_pass(c, qf, kf, vf, bf, tm, Gc, h0, scale_t, output, store, final):
    """Launch the sequential state pass: ``output`` -> o; ``store`` -> (S_n per chunk, U'); ``final`` -> the final
    state. Returns (o, final state, S_n, U'), None for what was not asked."""
    o = ht = h = vn = None
    if output:
        o = torch.empty(c.Ltok, c.H, c.V, dtype=qf.dtype, device=c.dev)   # every token row is written
    if final:
        ht = torch.empty(c.N, c.H, c.K, c.V, dtype=c.ACC, device=c.dev)
    if store:
        h = torch.empty(max(c.NT, 1), c.H, c.K, c.V, dtype=c.ST, device=c.dev)
        vn = torch.empty(kf.shape[0], c.H, c.V, dtype=c.ST, device=c.dev)
    BV, nw, ns = c.bv("state_fwd" if output else "state_rec")
    x = kf
    _state_fwd_kernel[(triton.cdiv(c.V, BV), c.N * c.H)](
        qf, kf, vf, bf, tm, _or(Gc, x), _or(h0, x), _or(o, x), _or(ht, x), _or(h, x), _or(vn, x), scale_t, c.seqs,
        *c.consts(), c.BK, BV, *c.types(), c.has_g, h0 is not None, output, store, final, num_warps=nw,
        num_stages=ns)
    return o, ht, h, vn


def _state_bwd_pass(c, qf, kf, bf, tm, Gc, dof, dht, h, vn, dv, dv_rev, scale_t):
    """Launch the reverse state pass: (dS_n per chunk, dY, dS_0); it writes dv too when ``dv_rev`` (2-byte inputs:
    dv from the unrounded dY)."""
    dh = torch.empty_like(h)
    dy = torch.empty_like(vn)
    dh0 = torch.empty(c.N, c.H, c.K, c.V, dtype=c.ACC, device=c.dev)
    x = kf
    BV, nw, ns = c.bv("state_bwd")
    _state_bwd_kernel[(triton.cdiv(c.V, BV), c.N * c.H)](
        qf, kf, bf, tm, _or(Gc, x), dof, dht.contiguous() if dht is not None else dh0, dh, dy, dv, dh0,
        scale_t, c.seqs, *c.consts(), c.BK, BV, *c.types(), c.has_g, dht is not None, dv_rev, num_warps=nw,
        num_stages=ns)
    return dh, dy, dh0
