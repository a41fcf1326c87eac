"""The gradient stages of the chunked GH product (:mod:`.wy`, kernels 5 and 6, or both in one), chunk-parallel after
the reverse state pass: dq, the non-WY part of dk and dX (:func:`_dqkwg_kernel`), the WY backward -- dk, dbeta, dg
and, for float32 / float64, dv (:func:`_wy_bwd_kernel`) --, or the two in one launch (:func:`_dqk_wy_kernel`);
the equations are :mod:`.wy`'s."""
from __future__ import annotations

import torch

from .._triton import tl, triton
from .tiles import _dot
from .wy_common import _chunk_gates, _chunk_program, _o, _or


@triton.jit
def _vblock_tiles(h_ptr, dh_ptr, vn_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk, rv, mv, H: tl.constexpr,
                  K: tl.constexpr, V: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr,
                  RND: tl.constexpr):
    """One value block's tiles of a chunk (key rows ``rk``, value columns ``rv``): (S_0, dS as stored; U', dO as
    dot operands)."""
    hoff = ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :]
    mkv = mk[:, None] & mv[None, :]
    S = tl.load(h_ptr + hoff, mask=mkv, other=0.0)
    dS = tl.load(dh_ptr + hoff, mask=mkv, other=0.0)
    un = _o(tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0), DT, ACC,
            EMU, RND)
    do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
            DT, ACC, EMU, RND)
    return S, dS, un, do


@triton.jit
def _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                 H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                 BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
                 RND: tl.constexpr, HAS_G: tl.constexpr, WITH_D: tl.constexpr):
    """One chunk's products with its states, for one key block (rows ``rk``), summed over value blocks:
    (dO S_0^T, U' dS^T, dX = -dY S_0^T, D = dO U'^T before gating and masking (WITH_D, else zeros),
    rowsum(S_0 * dS) (gated, else zeros)). :func:`_dqkwg_kernel` and :func:`_dqk_wy_kernel` share it."""
    dq = tl.zeros([BT, BK], dtype=ACC)
    dk = tl.zeros([BT, BK], dtype=ACC)
    dx = tl.zeros([BT, BK], dtype=ACC)
    Dm = tl.zeros([BT, BT], dtype=ACC)
    sdS = tl.zeros([BK], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):
        rv = i_v * BV + tl.arange(0, BV)
        mv = rv < V
        S, dS, un, do = _vblock_tiles(h_ptr, dh_ptr, vn_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk, rv, mv,
                                      H, K, V, DT, ACC, EMU, RND)
        dy = _o(tl.load(dy_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0), DT, ACC,
                EMU, RND)
        Sd = _o(S, DT, ACC, EMU, RND)
        dq += _dot(do, Sd, PREC, ACC, False, True)
        if WITH_D:
            Dm += _dot(do, un, PREC, ACC, False, True)
        dk += _dot(un, _o(dS, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dx -= _dot(dy, Sd, PREC, ACC, False, True)
        if HAS_G:
            sdS += tl.sum(S.to(ACC) * dS.to(ACC), 1)
    return dq, dk, dx, Dm, sdS


@triton.jit
def _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, mv, V: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr,
              PREC: tl.constexpr, EMU: tl.constexpr, RND: tl.constexpr, DV: tl.constexpr):
    """One value block's share of the WY backward's dY terms: (dY Y^T with Y = diag(b) V, rowsum(V * dY)); stores
    dv = diag(b) dY when DV (float32 / float64; 2-byte dv comes from the reverse pass)."""
    mpv = mp[:, None] & mv[None, :]
    dY = tl.load(dy_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
    vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
    if DV:
        tl.store(dv_ptr + row[:, None] * V + rv[None, :], (dY * bb[:, None]).to(dv_ptr.dtype.element_ty), mask=mpv)
    return (_dot(_o(dY, DT, ACC, EMU, RND), _o(vv * bb[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True),
            tl.sum(dY * vv, 1))


@triton.jit
def _gated_terms(dq, dk, Dm, qq, kk, sdS, G, GL, r, nlast, causal, DT: tl.constexpr, ACC: tl.constexpr,
                 PREC: tl.constexpr, EMU: tl.constexpr, RND: tl.constexpr):
    """The gate's share of the state terms (one key block, all of it where the block is the whole key width):
    dq = diag(gamma) dO S_0^T, dk = diag(exp(G_C - G)) U' dS^T, D = (dO U'^T) * Gamma masked to the causal
    triangle, and the part of dG they give (:mod:`.wy`): q_i . dq_i, rowsum - colsum of D * Q K^T, -F_j with
    F_j = k_j . dk_j, and at the chunk's last position (``nlast``) gamma_C rowsum(S_0 * dS) + sum_j F_j."""
    dq = dq * tl.exp(G)[:, None]
    dG = tl.sum(dq * qq, 1)
    Dm = Dm * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
    dk = dk * tl.exp(GL - G)[:, None]
    Fj = tl.sum(dk * kk, 1)
    Dm = tl.where(causal, Dm, 0.0)
    E = Dm * _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
    dG += tl.sum(E, 1) - tl.sum(E, 0) - Fj
    dG += tl.where(r == nlast, tl.exp(GL) * tl.sum(sdS, 0) + tl.sum(Fj, 0), 0.0)
    return dq, dk, Dm, dG


@triton.jit
def _dqkwg_kernel(q_ptr, k_ptr, Gc_ptr, h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, dq_ptr, dk_ptr, dx_ptr, dG_ptr,
                  scale_ptr, chunks_ptr, L,
                  H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                  BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                  EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr):
    """Chunk-parallel (:func:`_chunk_program`, blocks of keys: U', dY, dO are read once from memory, then from
    L2): dQ = diag(gamma) dO S_0^T + D K,
    dK = D^T Q + diag(exp(G_C - G)) U' dS^T, dX = T^T dW = -dY S_0^T (dW = -dU' S_0^T), and this key block's share
    of the part of dG that needs the chunk states (dG is linear in the key-column sums, so the blocks' shares add;
    stored per block)."""
    i_n, i_k, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, tl.cdiv(K, BK), BT)
    rk = i_k * BK + tl.arange(0, BK)
    mk = rk < K
    row = pos * H + i_h
    mkk = mp[:, None] & mk[None, :]
    scale = tl.load(scale_ptr).to(ACC)
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0).to(ACC) * scale
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
    dq, dk, dx, Dm, sdS = _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                                       H, K, V, BT, BK, BV, DT, ACC, PREC, EMU, RND, HAS_G, True)
    causal = r[:, None] >= r[None, :]
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        dq, dk, Dm, dG = _gated_terms(dq, dk, Dm, qq, kk, sdS, G, GL, r, end - start - 1, causal, DT, ACC, PREC,
                                      EMU, RND)
        tl.store(dG_ptr + i_k * L * H + row, dG, mask=mp)
    else:
        Dm = tl.where(causal, Dm, 0.0)
    Dd = _o(Dm, DT, ACC, EMU, RND)
    dq += _dot(Dd, _o(kk, DT, ACC, EMU, RND), PREC, ACC)
    dk += _dot(Dd, _o(qq, DT, ACC, EMU, RND), PREC, ACC, True, False)
    tl.store(dq_ptr + trow[:, None] * K + rk[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=isq[:, None] & mk[None, :])
    tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk, mask=mkk)
    tl.store(dx_ptr + row[:, None] * K + rk[None, :], dx, mask=mkk)


@triton.jit
def _dk_wy(Pd, kk, bb, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
           RND: tl.constexpr):
    """The part of dk through A (one key block): diag(b) P K + P^T diag(b) K, P = dA * Gamma (:mod:`.wy`)."""
    return _dot(Pd, _o(kk, DT, ACC, EMU, RND), PREC, ACC) * bb[:, None] \
        + _dot(Pd, _o(kk * bb[:, None], DT, ACC, EMU, RND), PREC, ACC, True, False)


@triton.jit
def _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H: tl.constexpr, NH,
           HAS_G: tl.constexpr):
    """The WY backward's last step: dbeta = db + rowsum(gamma K * dX) + rowsum(P * K K^T) (``db`` holding
    rowsum(V * dY), ``kdx`` rowsum(K * dX)) stored; gated: dG (holding the other parts) gets
    b gamma rowsum(K * dX) + rowsum(R) - colsum(R), R = P * K K^T * b, and dg = its reverse in-chunk cumulative sum
    is stored at each token's first position."""
    db += kdx * gam + tl.sum(P * KK, 1)
    tl.store(db_ptr + row, db.to(db_ptr.dtype.element_ty), mask=mp)
    if HAS_G:
        R = P * KK * bb[:, None]
        dG += bb * gam * kdx + tl.sum(R, 1) - tl.sum(R, 0)
        dG = tl.where(mp, dG, 0.0)
        dg = tl.cumsum(dG, 0, reverse=True)
        first = mp & ((pos % NH) == 0)
        tl.store(dg_ptr + (pos // NH) * H + i_h, dg.to(dg_ptr.dtype.element_ty), mask=first)


@triton.jit
def _wy_bwd_kernel(k_ptr, v_ptr, b_ptr, Gc_ptr, t_ptr, dx_ptr, dy_ptr, dkp_ptr, dGp_ptr, dk_ptr, dv_ptr, db_ptr,
                   dg_ptr, chunks_ptr, L, NKB: tl.constexpr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                   BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                   EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, DV: tl.constexpr):
    """Chunk-parallel WY backward (:mod:`.wy`) from dX = T^T dW and dY = T^T dU (the earlier kernels form
    them; the reverse pass wrote dv = diag(b) dY): dA = -strictly_lower(T^T dT T^T) =
    -strictly_lower((dX X^T + dY Y^T) T^T), one product with T (reads T, kept by the forward); adds the WY part of
    dk, writes dk, dbeta, and dg as the reverse in-chunk cumulative sum of dG. The key dimension runs in blocks of
    BK (two passes: K K^T and dX X^T first, then dk per block once P is known), so that no BT x K tile has to stay
    in registers: float32 tiles of the whole key width spilled."""
    _, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    row = pos * H + i_h
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    low = r[:, None] > r[None, :]
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        gam = tl.exp(G)
        Gam = tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    else:
        gam = tl.zeros([BT], dtype=ACC) + 1.0
    Tmo = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0).to(ACC), DT, ACC, EMU,
             RND)
    bg = bb * gam
    KK = tl.zeros([BT, BT], dtype=ACC)
    dT = tl.zeros([BT, BT], dtype=ACC)   # T^T dT = dX X^T + dY Y^T
    for i_k in range(tl.cdiv(K, BK)):   # K K^T and the dX X^T part
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kd = _o(kk, DT, ACC, EMU, RND)
        KK += _dot(kd, kd, PREC, ACC, False, True)
        dXd = _o(tl.load(dx_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0), DT, ACC, EMU, RND)
        dT += _dot(dXd, _o(kk * bg[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
    db = tl.zeros([BT], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):
        rv = i_v * BV + tl.arange(0, BV)
        t, d = _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, rv < V, V, DT, ACC, PREC, EMU, RND, DV)
        dT += t
        db += d
    dA = _dot(_o(dT, DT, ACC, EMU, RND), Tmo, PREC, ACC, False, True)
    dA = tl.where(low, -dA, 0.0)
    if HAS_G:
        P = dA * Gam
    else:
        P = dA
    Pd = _o(P, DT, ACC, EMU, RND)
    kdx = tl.zeros([BT], dtype=ACC)
    for i_k in range(tl.cdiv(K, BK)):   # dk = dk' + diag(b gamma) dX + diag(b) P K + P^T diag(b) K
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        dX = tl.load(dx_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kdx += tl.sum(dX * kk, 1)
        dk = tl.load(dkp_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC) + dX * bg[:, None] \
            + _dk_wy(Pd, kk, bb, DT, ACC, PREC, EMU, RND)
        tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk.to(dk_ptr.dtype.element_ty), mask=mkk)
    dG = tl.zeros([BT], dtype=ACC)
    if HAS_G:
        for i_k in tl.static_range(NKB):
            dG += tl.load(dGp_ptr + i_k * L * H + row, mask=mp, other=0.0).to(ACC)
    _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H, NH, HAS_G)


@triton.jit
def _fused_program(chunks_ptr, b_ptr, scale_ptr, H: tl.constexpr, NH, BT: tl.constexpr, ACC: tl.constexpr):
    """A fused backward program's chunk (:func:`_chunk_program`, one per chunk and head) and what it derives from
    it: (i_n, i_h, start, end, r, pos, mp, its rows, the scale, the query rows' mask and token rows, beta, the
    causal and strictly lower masks)."""
    i_n, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    row = pos * H + i_h
    scale = tl.load(scale_ptr).to(ACC)
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    return i_n, i_h, start, end, r, pos, mp, row, scale, isq, trow, bb, r[:, None] >= r[None, :], \
        r[:, None] > r[None, :]


@triton.jit
def _wy_da(dT, t_ptr, row, r, mp, low, BT: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
           EMU: tl.constexpr, RND: tl.constexpr):
    """dA = -strictly_lower(dT T^T) from ``dT`` = T^T dT = dX X^T + dY Y^T and the chunk's T (:mod:`.wy`)."""
    Tmo = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0).to(ACC), DT, ACC, EMU,
             RND)
    dA = _dot(_o(dT, DT, ACC, EMU, RND), Tmo, PREC, ACC, False, True)
    return tl.where(low, -dA, 0.0)


@triton.jit
def _dqk_wy_kernel(q_ptr, k_ptr, v_ptr, b_ptr, Gc_ptr, t_ptr, h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, dq_ptr,
                   dkp_ptr, dk_ptr, dv_ptr, db_ptr, dg_ptr, scale_ptr, chunks_ptr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                   BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                   EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, DV: tl.constexpr):
    """Chunk-parallel, one program per chunk and head: :func:`_dqkwg_kernel` and :func:`_wy_bwd_kernel` in one
    launch, so that dX and the non-WY part of dk never go through memory as separate tensors (:mod:`.wy`):

    1. over value blocks: D = (dO U'^T) * Gamma (lower incl. diagonal), dY Y^T, rowsum(V * dY), and dv = diag(b) dY
       when DV (float32 / float64: the reverse pass then does not write it);
    2. over key blocks (of BK), each over value blocks: dQ = diag(gamma) dO S_0^T + D K (stored),
       dK' = D^T Q + diag(exp(G_C - G)) U' dS^T + diag(b gamma) dX with dX = -dY S_0^T, kept in ``dkp`` (the
       float32 dk itself, or a float32 scratch for 2-byte dk); dX X^T joins dY Y^T into T^T dT;
    3. dA = -strictly_lower((dX X^T + dY Y^T) T^T), P = dA * Gamma; over key blocks: dk = dK' + diag(b) P K
       + P^T diag(b) K, K K^T; then dbeta and dg (the reverse in-chunk cumulative sum of dG)."""
    i_n, i_h, start, end, r, pos, mp, row, scale, isq, trow, bb, causal, low = _fused_program(
        chunks_ptr, b_ptr, scale_ptr, H, NH, BT, ACC)
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        gam = tl.exp(G)
    else:
        gam = tl.zeros([BT], dtype=ACC) + 1.0
    bg = bb * gam
    Dm = tl.zeros([BT, BT], dtype=ACC)
    dT = tl.zeros([BT, BT], dtype=ACC)   # T^T dT = dX X^T + dY Y^T
    db = tl.zeros([BT], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):    # 1.
        rv = i_v * BV + tl.arange(0, BV)
        mv = rv < V
        un = _o(tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0), DT, ACC,
                EMU, RND)
        do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
                DT, ACC, EMU, RND)
        Dm += _dot(do, un, PREC, ACC, False, True)
        t, d = _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, mv, V, DT, ACC, PREC, EMU, RND, DV)
        dT += t
        db += d
    if HAS_G:
        Dm = Dm * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
        QK = tl.zeros([BT, BT], dtype=ACC)
        sdS_all = tl.zeros([BK], dtype=ACC)   # rowsum(S_0 * dS), the key blocks added up
        Fj = tl.zeros([BT], dtype=ACC)
    Dm = tl.where(causal, Dm, 0.0)
    Dd = _o(Dm, DT, ACC, EMU, RND)
    kdx = tl.zeros([BT], dtype=ACC)
    dG = tl.zeros([BT], dtype=ACC)
    for i_k in range(tl.cdiv(K, BK)):    # 2.
        rk = i_k * BK + tl.arange(0, BK)
        mk = rk < K
        mkk = mp[:, None] & mk[None, :]
        qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0)
        qq = qq.to(ACC) * scale
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        dq, dk, dx, D0, sdS = _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                                          H, K, V, BT, BK, BV, DT, ACC, PREC, EMU, RND, HAS_G, False)   # D0: zeros
        if HAS_G:
            sdS_all += sdS
            dq = dq * gam[:, None]
            dG += tl.sum(dq * qq, 1)
            dk = dk * tl.exp(GL - G)[:, None]
            Fj += tl.sum(dk * kk, 1)
            QK += _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dq += _dot(Dd, _o(kk, DT, ACC, EMU, RND), PREC, ACC)
        tl.store(dq_ptr + trow[:, None] * K + rk[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
                 mask=isq[:, None] & mk[None, :])
        dk += _dot(Dd, _o(qq, DT, ACC, EMU, RND), PREC, ACC, True, False) + dx * bg[:, None]
        kdx += tl.sum(dx * kk, 1)
        dT += _dot(_o(dx, DT, ACC, EMU, RND), _o(kk * bg[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
        tl.store(dkp_ptr + row[:, None] * K + rk[None, :], dk, mask=mkk)
    if HAS_G:
        E = Dm * QK
        dG += tl.sum(E, 1) - tl.sum(E, 0) - Fj
        dG += tl.where(r == end - start - 1, tl.exp(GL) * tl.sum(sdS_all, 0) + tl.sum(Fj, 0), 0.0)
    P = _wy_da(dT, t_ptr, row, r, mp, low, BT, DT, ACC, PREC, EMU, RND)
    if HAS_G:
        P = P * tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    Pd = _o(P, DT, ACC, EMU, RND)
    KK = tl.zeros([BT, BT], dtype=ACC)
    tl.debug_barrier()   # step 2's dK' stores are read back below, by other threads of this program
    for i_k in range(tl.cdiv(K, BK)):    # 3.
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kd = _o(kk, DT, ACC, EMU, RND)
        KK += _dot(kd, kd, PREC, ACC, False, True)
        dk = tl.load(dkp_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0) \
            + _dk_wy(Pd, kk, bb, DT, ACC, PREC, EMU, RND)
        tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk.to(dk_ptr.dtype.element_ty), mask=mkk)
    _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H, NH, HAS_G)


@triton.jit
def _dqk_wy_once_kernel(q_ptr, k_ptr, v_ptr, b_ptr, Gc_ptr, t_ptr, h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, dq_ptr,
                        dk_ptr, dv_ptr, db_ptr, dg_ptr, scale_ptr, chunks_ptr,
                        H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                        BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                        EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, DV: tl.constexpr):
    """:func:`_dqk_wy_kernel`'s equations (:mod:`.wy`) with every tile read once: the whole key width is one block
    (BK >= K), so one pass over value blocks loads U', dO, dY, V, S_0 and dS once each and forms D = dO U'^T,
    dY Y^T, rowsum(V * dY), dv = diag(b) dY (when DV), dO S_0^T, U' dS^T and dX = -dY S_0^T together; q and k are
    loaded once, and dk's partial sum stays in registers (no float32 scratch written and read back). Then, as
    there: dQ = diag(gamma) dO S_0^T + D K; dK = D^T Q + diag(exp(G_C - G)) U' dS^T + diag(b gamma) dX
    + diag(b) P K + P^T diag(b) K with P = -strictly_lower((dX X^T + dY Y^T) T^T) * Gamma; dbeta and dg."""
    i_n, i_h, start, end, r, pos, mp, row, scale, isq, trow, bb, causal, low = _fused_program(
        chunks_ptr, b_ptr, scale_ptr, H, NH, BT, ACC)
    rk = tl.arange(0, BK)
    mk = rk < K
    mkk = mp[:, None] & mk[None, :]
    qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0)
    qq = qq.to(ACC) * scale
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
    dq = tl.zeros([BT, BK], dtype=ACC)
    dk = tl.zeros([BT, BK], dtype=ACC)
    dx = tl.zeros([BT, BK], dtype=ACC)
    Dm = tl.zeros([BT, BT], dtype=ACC)
    dT = tl.zeros([BT, BT], dtype=ACC)   # T^T dT = dX X^T + dY Y^T
    db = tl.zeros([BT], dtype=ACC)
    sdS = tl.zeros([BK], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):
        rv = i_v * BV + tl.arange(0, BV)
        mv = rv < V
        mpv = mp[:, None] & mv[None, :]
        S, dS, un, do = _vblock_tiles(h_ptr, dh_ptr, vn_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk, rv, mv,
                                      H, K, V, DT, ACC, EMU, RND)
        dY = tl.load(dy_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
        vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
        if DV:
            tl.store(dv_ptr + row[:, None] * V + rv[None, :], (dY * bb[:, None]).to(dv_ptr.dtype.element_ty),
                     mask=mpv)
        dy = _o(dY, DT, ACC, EMU, RND)
        Sd = _o(S, DT, ACC, EMU, RND)
        Dm += _dot(do, un, PREC, ACC, False, True)
        dT += _dot(dy, _o(vv * bb[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
        db += tl.sum(dY * vv, 1)
        dq += _dot(do, Sd, PREC, ACC, False, True)
        dk += _dot(un, _o(dS, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dx -= _dot(dy, Sd, PREC, ACC, False, True)
        if HAS_G:
            sdS += tl.sum(S.to(ACC) * dS.to(ACC), 1)
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        gam = tl.exp(G)
        dq, dk, Dm, dG = _gated_terms(dq, dk, Dm, qq, kk, sdS, G, GL, r, end - start - 1, causal, DT, ACC, PREC,
                                      EMU, RND)
    else:
        gam = tl.zeros([BT], dtype=ACC) + 1.0
        dG = tl.zeros([BT], dtype=ACC)
        Dm = tl.where(causal, Dm, 0.0)
    bg = bb * gam
    Dd = _o(Dm, DT, ACC, EMU, RND)
    kd = _o(kk, DT, ACC, EMU, RND)
    dq += _dot(Dd, kd, PREC, ACC)
    tl.store(dq_ptr + trow[:, None] * K + rk[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=isq[:, None] & mk[None, :])
    dk += _dot(Dd, _o(qq, DT, ACC, EMU, RND), PREC, ACC, True, False) + dx * bg[:, None]
    kdx = tl.sum(dx * kk, 1)
    dT += _dot(_o(dx, DT, ACC, EMU, RND), _o(kk * bg[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
    P = _wy_da(dT, t_ptr, row, r, mp, low, BT, DT, ACC, PREC, EMU, RND)
    if HAS_G:
        P = P * tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    Pd = _o(P, DT, ACC, EMU, RND)
    KK = _dot(kd, kd, PREC, ACC, False, True)
    dk += _dk_wy(Pd, kk, bb, DT, ACC, PREC, EMU, RND)
    tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk.to(dk_ptr.dtype.element_ty), mask=mkk)
    _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H, NH, HAS_G)


def _dqk_wy_once_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dk, dv, db, dg, scale_t, dv_wy):
    """Launch :func:`_dqk_wy_once_kernel` (the whole key width as one block; tiles "dqkwy_once"): dq, dk, dbeta,
    dg, and dv when ``dv_wy``, into the given tensors."""
    x = kf
    BV, nw, ns = c.bv("dqkwy_once")
    if c.NT:
        _dqk_wy_once_kernel[(c.NT, c.H)](qf, kf, vf, bf, _or(Gc, x), tm, h, dh, vn, dy, dof, dq, dk, dv, db,
                                         _or(dg, x), scale_t, c.chunks, *c.consts(), c.BK, BV, *c.types(), c.has_g,
                                         dv_wy, num_warps=nw, num_stages=ns)


def _dqk_wy_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dkp, dk, dv, db, dg, scale_t, dv_wy):
    """Launch :func:`_dqk_wy_kernel`: dq, dk, dbeta, dg, and dv when ``dv_wy``, into the given tensors."""
    x = kf
    BV, nw, ns = c.bv("dqkwy")
    if c.NT:
        _dqk_wy_kernel[(c.NT, c.H)](qf, kf, vf, bf, _or(Gc, x), tm, h, dh, vn, dy, dof, dq, dkp, dk, dv, db,
                                    _or(dg, x), scale_t, c.chunks, *c.consts(), min(c.BK, c.cfg["dqkwy_bk"]),
                                    BV, *c.types(), c.has_g, dv_wy, num_warps=nw, num_stages=ns)


def _dqkwg_pass(c, qf, kf, Gc, h, dh, vn, dy, dof, dq, dkp, scale_t):
    """Launch :func:`_dqkwg_kernel`: dq and the non-WY part of dk into the given tensors; returns (dX, the key
    blocks' shares of dG (None without a gate), the number of key blocks)."""
    L = kf.shape[0]
    x = kf
    dx = torch.empty(L, c.H, c.K, dtype=c.ST, device=c.dev)
    BV, nw, ns = c.bv("dqkwg")
    BKS = min(c.BK, c.cfg["dqkwg_bk"])
    NKB = triton.cdiv(c.K, BKS)
    dGp = torch.empty(NKB, L, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None
    if c.NT:
        _dqkwg_kernel[(c.NT * NKB, c.H)](qf, kf, _or(Gc, x), h, dh, vn, dy, dof, dq, dkp, dx, _or(dGp, x), scale_t,
                                        c.chunks, L, *c.consts(), BKS, BV, *c.types(), c.has_g, num_warps=nw,
                                        num_stages=ns)
    return dx, dGp, NKB


def _wy_bwd_pass(c, kf, vf, bf, Gc, tm, dx, dy, dkp, dGp, NKB, dk, dv, db, dg, dv_wy):
    """Launch :func:`_wy_bwd_kernel`: dk, dbeta, dg, and dv when ``dv_wy``, into the given tensors."""
    L = kf.shape[0]
    x = kf
    BV, nw, ns = c.bv("wy_bwd")
    BKW = min(c.BK, c.cfg["wy_bk"])
    if c.NT:
        _wy_bwd_kernel[(c.NT, c.H)](kf, vf, bf, _or(Gc, x), tm, dx, dy, dkp, _or(dGp, x), dk, dv, db, _or(dg, x),
                                    c.chunks, L, NKB, *c.consts(), BKW, BV, *c.types(), c.has_g, dv_wy,
                                    num_warps=nw, num_stages=ns)
