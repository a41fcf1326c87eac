"""Chunked (WY / UT form) kernels of the GH-product layer, with a backward pass (autograd.Function).

docs/algorithms.rst "The chunked delta rule" (Yang et al. 2024; fla's ``chunk_delta_rule``): DeltaProduct (paper 001) is run
by *interleaving*: a token's n_h (k, v, beta) triples form a sequence n_h times longer (``k`` of shape
(B, T, n_h, H, K) is already that sequence as (B, T*n_h, H, K)) and only every n_h-th output is kept. In a chunk of
C positions with keys K (C x K), values V, betas b::

    A = strictly_lower(diag(b) K K^T),   T = (I + A)^{-1},   W = T diag(b) K,   U = T diag(b) V
    U' = U - W S,    O = Q S + tril(Q K^T) U'   (inclusive lower triangle),    S <- S + K^T U'

(the chunk's product of GH factors is ``I - K^T W``). Kernel 1 (:func:`_wy_kernel`, parallel over chunks) builds
T by forward substitution (row i of T is ``e_i - A[i, :] T``) and writes W, U; kernel 2
(:func:`_chunk_fwd_kernel`, one program per (batch, head, value block)) carries S (float32) across chunks and writes
the outputs. bf16/fp16 inputs use tensor-core dots on operands in the input dtype with float32 accumulation
(as fla does); float32 inputs use IEEE float32 dots ("fp32 end to end"); float64 is supported for checking.

Backward, two implementations (``chunk_delta_product(..., backward=...)``):

* ``"torch"`` (default): the state recurrence is recomputed by :func:`chunk_delta_product_torch` (the same chunk
  equations in torch, ``torch.linalg.solve_triangular`` for T) and differentiated by torch autograd: exact (the
  gradient of the same function) and checked on the H200, but slow (a Python loop over chunks; benchmarks/RESULTS.md).
* ``"triton"``: :func:`chunk_bwd_triton`: the two sequential passes run in Triton (the forward recomputed storing
  the chunk states S_n and U'_n; a reverse pass for dU' and dS), the rest is batched over all chunks in torch.
  Checked against autograd of the naive loop in the CPU interpreter; not yet run on a GPU.

The gate ``g`` is not supported here (use the fused recurrent kernel or the naive reference). For training use
:func:`lrnnkit.kernels.gh.chunk_gh` (:mod:`.wy`): the same WY forward with a backward written as Triton kernels
end to end, gates and packed variable lengths (benchmarks/RESULTS.md "kernels", issue 12).
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .._checks import acc_dtype
from .._triton import INTERPRET, TL_DTYPE, check_device, tl, triton
from .inputs import prepare
from .reference import chunk_gh_torch
from .tiles import _op, _tinv

CHUNK_SIZES = (16, 32, 64)


@triton.jit
def _wy_kernel(k_ptr, v_ptr, b_ptr, w_ptr, u_ptr, L, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
               BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr,
               PREC: tl.constexpr, TPREC: tl.constexpr, EMU: tl.constexpr, SPLIT: tl.constexpr):
    """W = T diag(b) K, U = T diag(b) V with T = (I + A)^{-1}, A = strictly_lower(diag(b) K K^T).

    T is formed blockwise (blocks of BC = 16 rows; NB = BT / 16): split I + A = (I + A_d) + A_o into its block
    diagonal and strictly block-lower parts; D = (I + A_d)^{-1} by forward substitution, all NB diagonal blocks at
    once (15 steps on an (NB, 16, 16) tile); then I + A = (I + A_d)(I + N) with N = D A_o strictly block-lower, so
    N^NB = 0 and, for NB <= 4, T = (I + N)^{-1} D = (I - N)(I + N^2) D: four BT x BT products on the tensor
    cores instead of BT sequential row updates. With SPLIT, program axis 2 picks W (0) or U (1): T is formed
    twice but fewer tiles are live at once. The inverse is :func:`lrnnkit.kernels.gh.tiles._tinv`."""
    i_c = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    r = tl.arange(0, BT)
    pos = i_c * BT + r
    mp = pos < L
    rk = tl.arange(0, BK)
    rv = tl.arange(0, BV)
    row = (i_b * L + pos) * H + i_h
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & (rk[None, :] < K), other=0.0)
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    kb = _op(kk.to(ACC) * bb[:, None], DT, ACC, EMU)
    A = tl.dot(kb, tl.trans(_op(kk, DT, ACC, EMU)), input_precision=PREC, out_dtype=ACC)
    A = tl.where(r[:, None] > r[None, :], A, 0.0)
    Tm = _tinv(A, BT, ACC, TPREC, True)
    Tq = _op(Tm, DT, ACC, EMU)
    which = tl.program_id(2) if SPLIT else 0
    if (not SPLIT) or which == 0:
        w = tl.dot(Tq, kb, input_precision=PREC, out_dtype=ACC)
        tl.store(w_ptr + row[:, None] * K + rk[None, :], w.to(w_ptr.dtype.element_ty),
                 mask=mp[:, None] & (rk[None, :] < K))
    if (not SPLIT) or which == 1:
        vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & (rv[None, :] < V), other=0.0)
        vb = _op(vv.to(ACC) * bb[:, None], DT, ACC, EMU)
        u = tl.dot(Tq, vb, input_precision=PREC, out_dtype=ACC)
        tl.store(u_ptr + row[:, None] * V + rv[None, :], u.to(u_ptr.dtype.element_ty),
                 mask=mp[:, None] & (rv[None, :] < V))


@triton.jit
def _wy_subst_kernel(k_ptr, v_ptr, b_ptr, w_ptr, u_ptr, L, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
                     BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr,
                     PREC: tl.constexpr, TPREC: tl.constexpr, EMU: tl.constexpr, SPLIT: tl.constexpr):
    """W, U as :func:`_wy_kernel`, with T = (I + A)^{-1} by plain forward substitution over all BT rows (row i of T
    is ``e_i - A[i, :] T``): simpler, slower (BT sequential steps); kept as the fallback variant."""
    i_c = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    r = tl.arange(0, BT)
    pos = i_c * BT + r
    mp = pos < L
    rk = tl.arange(0, BK)
    rv = tl.arange(0, BV)
    row = (i_b * L + pos) * H + i_h
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & (rk[None, :] < K), other=0.0)
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    kb = _op(kk.to(ACC) * bb[:, None], DT, ACC, EMU)
    A = tl.dot(kb, tl.trans(_op(kk, DT, ACC, EMU)), input_precision=PREC, out_dtype=ACC)
    A = tl.where(r[:, None] > r[None, :], A, 0.0)
    Tm = _tinv(A, BT, ACC, TPREC, False)
    Tq = _op(Tm, DT, ACC, EMU)
    w = tl.dot(Tq, kb, input_precision=PREC, out_dtype=ACC)
    tl.store(w_ptr + row[:, None] * K + rk[None, :], w.to(w_ptr.dtype.element_ty),
             mask=mp[:, None] & (rk[None, :] < K))
    vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & (rv[None, :] < V), other=0.0)
    vb = _op(vv.to(ACC) * bb[:, None], DT, ACC, EMU)
    u = tl.dot(Tq, vb, input_precision=PREC, out_dtype=ACC)
    tl.store(u_ptr + row[:, None] * V + rv[None, :], u.to(u_ptr.dtype.element_ty),
             mask=mp[:, None] & (rv[None, :] < V))


@triton.jit
def _chunk_fwd_kernel(q_ptr, k_ptr, w_ptr, u_ptr, h0_ptr, o_ptr, ht_ptr, scale_ptr, s_ptr, un_ptr, T, L,
                      H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH: tl.constexpr, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      HAS_H0: tl.constexpr, STORE_HT: tl.constexpr, EMU: tl.constexpr,
                      STORE_STATES: tl.constexpr):
    i_v = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    r = tl.arange(0, BT)
    rk = tl.arange(0, BK)
    rv = i_v * BV + tl.arange(0, BV)
    mk = rk < K
    mv = rv < V
    scale = tl.load(scale_ptr).to(ACC)   # a tensor: Triton passes float arguments as fp32
    if HAS_H0:
        S = tl.load(h0_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                    mask=mk[:, None] & mv[None, :], other=0.0).to(ACC)
    else:
        S = tl.zeros([BK, BV], dtype=ACC)
    causal = r[:, None] >= r[None, :]
    NC = tl.cdiv(L, BT)
    for c in range(NC):
        pos = c * BT + r
        mp = pos < L
        row = (i_b * L + pos) * H + i_h
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0)
        kk = _op(kk, DT, ACC, EMU)
        ww = tl.load(w_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0)
        ww = _op(ww, DT, ACC, EMU)
        uu = tl.load(u_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0).to(ACC)
        last = mp & ((pos % NH) == (NH - 1))
        tok = pos // NH
        qrow = (i_b * T + tok) * H + i_h
        qq = tl.load(q_ptr + qrow[:, None] * K + rk[None, :], mask=last[:, None] & mk[None, :], other=0.0)
        qq = _op(qq, DT, ACC, EMU)
        if STORE_STATES:   # for the backward: S_n (state before chunk n) and U'_n
            tl.store(s_ptr + (((i_b * H + i_h) * NC + c) * K + rk[:, None]) * V + rv[None, :], S,
                     mask=mk[:, None] & mv[None, :])
        Sd = _op(S, DT, ACC, EMU)
        un = uu - tl.dot(ww, Sd, input_precision=PREC, out_dtype=ACC)
        if STORE_STATES:
            tl.store(un_ptr + row[:, None] * V + rv[None, :], un, mask=mp[:, None] & mv[None, :])
        und = _op(un, DT, ACC, EMU)
        qk = tl.dot(qq, tl.trans(kk), input_precision=PREC, out_dtype=ACC)
        qk = _op(tl.where(causal, qk, 0.0), DT, ACC, EMU)
        o = tl.dot(qq, Sd, input_precision=PREC, out_dtype=ACC) + tl.dot(qk, und, input_precision=PREC,
                                                                          out_dtype=ACC)
        tl.store(o_ptr + qrow[:, None] * V + rv[None, :], (o * scale).to(o_ptr.dtype.element_ty),
                 mask=last[:, None] & mv[None, :])
        S = S + tl.dot(tl.trans(kk), und, input_precision=PREC, out_dtype=ACC)
    if STORE_HT:
        tl.store(ht_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :], S.to(ht_ptr.dtype.element_ty),
                 mask=mk[:, None] & mv[None, :])


def _check_chunk(chunk_size: int) -> None:
    if chunk_size not in CHUNK_SIZES:
        raise InputError(f"chunk_size must be one of {CHUNK_SIZES}, got {chunk_size}")


def _kernel_config(dtype: torch.dtype):
    """(operand dtype, accumulation dtype, dot precision, precision of the T-building products)."""
    acc = acc_dtype(dtype)
    if dtype in (torch.float16, torch.bfloat16):
        # operands in the input dtype (the precision flag does not apply to them); T's float32 products in tf32
        # (10-bit mantissa, finer than the bf16 rounding T then gets)
        return dtype, acc, "tf32", "tf32"
    return acc, acc, "ieee", "ieee"


# defaults from the H200 sweep in benchmarks/bench_kernels.py (bf16, K = V = 128): 4 warps, one program for W and
# U, value block 128 in the state pass
WY_CONFIG = {"num_warps": 4, "split": False, "kind": "blocked"}
STATE_CONFIG = {"num_warps": 4, "block_v": 128}


def _wy_launch(kc, vc, bc, w, u, B, L, H, K, V, BT, BK, BVF, DT, ACC, PREC, TPREC, EMU, num_warps=None, split=None,
               kind=None):
    split = WY_CONFIG["split"] if split is None else split
    if kind is None:
        # float64 uses plain substitution: the blocked kernel, compiled by triton 3.6 for the H200, gave wrong W/U in
        # float64 at chunk 64 (rows of the second block on; right in float32/bf16 and in the interpreter), found by
        # test_chunk_wy_variants_agree on the GPU; the cause is not isolated. The substitution kernel passed there.
        kind = "subst" if ACC == torch.float64 else WY_CONFIG["kind"]
    kern = _wy_kernel if kind == "blocked" else _wy_subst_kernel
    if kern is _wy_subst_kernel:
        split = False
    nw = num_warps or WY_CONFIG["num_warps"]
    if BK * BVF <= 64 * 64 and num_warps is None:
        nw = 4
    NC = triton.cdiv(L, BT)
    kern[(NC, B * H, 2 if split else 1)](kc, vc, bc, w, u, L, H, K, V, BT, BK, BVF, TL_DTYPE[DT], TL_DTYPE[ACC],
                                               PREC, TPREC, EMU, split, num_warps=nw)


def chunk_fwd_triton(q, k, v, beta, scale, h0, output_final_state, chunk_size=64, block_v=None, wy=None,
                     state_warps=None, store_states=False):
    """Run the two kernels on canonical, validated inputs: q (B,T,H,K), k (B,T,NH,H,K), v (B,T,NH,H,V),
    beta (B,T,NH,H). Returns ``(o, final_state or None)``."""
    _check_chunk(chunk_size)
    check_device(q, k, v, beta, h0)
    B, T, H, K = q.shape
    NH, V = k.shape[2], v.shape[-1]
    L = T * NH
    DT, ACC, PREC, TPREC = _kernel_config(q.dtype)
    EMU = INTERPRET and DT != ACC
    BT = chunk_size
    BK = max(16, triton.next_power_of_2(K))
    BVF = max(16, triton.next_power_of_2(V))
    qc, kc, vc, bc = q.contiguous(), k.contiguous(), v.contiguous(), beta.contiguous()
    wu_dtype = q.dtype if q.dtype in (torch.float16, torch.bfloat16) else ACC
    w = torch.empty(B, L, H, K, dtype=wu_dtype, device=q.device)
    u = torch.empty(B, L, H, V, dtype=wu_dtype, device=q.device)
    _wy_launch(kc, vc, bc, w, u, B, L, H, K, V, BT, BK, BVF, DT, ACC, PREC, TPREC, EMU, **(wy or {}))
    fp32_ops = DT == ACC
    BV = block_v or STATE_CONFIG["block_v"] or min(BVF, 32 if fp32_ops else 64)
    sc = torch.tensor([scale], dtype=ACC, device=q.device)
    nws = state_warps or STATE_CONFIG["num_warps"] or (4 if BK * BV <= 64 * 64 else 8)
    o = torch.zeros(B, T, H, V, dtype=q.dtype, device=q.device)
    ht = torch.empty(B, H, K, V, dtype=ACC, device=q.device) if output_final_state else o
    h0c = h0.contiguous() if h0 is not None else o
    if store_states:
        states = torch.empty(B, H, triton.cdiv(L, BT), K, V, dtype=ACC, device=q.device)
        vnew = torch.zeros(B, L, H, V, dtype=ACC, device=q.device)
    else:
        states = vnew = o
    _chunk_fwd_kernel[(triton.cdiv(V, BV), B * H)](qc, kc, w, u, h0c, o, ht, sc, states, vnew, T, L, H, K, V, NH, BT,
                                                    BK, BV, TL_DTYPE[DT], TL_DTYPE[ACC], PREC, h0 is not None,
                                                    output_final_state, EMU, store_states, num_warps=nws,
                                                    num_stages=1 if fp32_ops else 2)
    if store_states:
        return o, (ht if output_final_state else None), (w, states, vnew)
    return o, (ht if output_final_state else None)


@triton.jit
def _chunk_bwd_dh_kernel(q_ptr, k_ptr, w_ptr, do_ptr, dht_ptr, dun_ptr, dsn_ptr, dh0_ptr, scale_ptr, T, L,
                         H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH: tl.constexpr, BT: tl.constexpr,
                         BK: tl.constexpr, BV: tl.constexpr, ACC: tl.constexpr, HAS_DHT: tl.constexpr):
    """Reverse pass over the chunks (one program per (batch, head, value block)), in ACC precision:
    with M = tril(Q K^T) and dS the gradient of the state after chunk n,
    ``dU'_n = M^T dO_n + K_n dS``, stored; dS_{n+1} stored; then ``dS <- dS + Q_n^T dO_n - W_n^T dU'_n``."""
    i_v = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    r = tl.arange(0, BT)
    rk = tl.arange(0, BK)
    rv = i_v * BV + tl.arange(0, BV)
    mk = rk < K
    mv = rv < V
    scale = tl.load(scale_ptr).to(ACC)
    if HAS_DHT:
        dS = tl.load(dht_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                     mask=mk[:, None] & mv[None, :], other=0.0).to(ACC)
    else:
        dS = tl.zeros([BK, BV], dtype=ACC)
    NC = tl.cdiv(L, BT)
    upper = r[:, None] <= r[None, :]     # (M^T)[j, i] = q_i . k_j for i >= j
    for cc in range(NC):
        c = NC - 1 - cc
        tl.store(dsn_ptr + (((i_b * H + i_h) * NC + c) * K + rk[:, None]) * V + rv[None, :], dS,
                 mask=mk[:, None] & mv[None, :])
        pos = c * BT + r
        mp = pos < L
        row = (i_b * L + pos) * H + i_h
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0).to(ACC)
        ww = tl.load(w_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0).to(ACC)
        last = mp & ((pos % NH) == (NH - 1))
        tok = pos // NH
        trow = (i_b * T + tok) * H + i_h
        qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=last[:, None] & mk[None, :], other=0.0).to(ACC)
        do = tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=last[:, None] & mv[None, :], other=0.0).to(ACC)
        do = do * scale
        mt = tl.where(upper, tl.dot(kk, tl.trans(qq), input_precision="ieee", out_dtype=ACC), 0.0)
        dun = tl.dot(mt, do, input_precision="ieee", out_dtype=ACC) + tl.dot(kk, dS, input_precision="ieee",
                                                                             out_dtype=ACC)
        tl.store(dun_ptr + row[:, None] * V + rv[None, :], dun, mask=mp[:, None] & mv[None, :])
        dS = dS + tl.dot(tl.trans(qq), do, input_precision="ieee", out_dtype=ACC) \
            - tl.dot(tl.trans(ww), dun, input_precision="ieee", out_dtype=ACC)
    tl.store(dh0_ptr + ((i_b * H + i_h) * K + rk[:, None]) * V + rv[None, :], dS, mask=mk[:, None] & mv[None, :])


def chunk_bwd_triton(q, k, v, beta, h0, do, dht, scale, chunk_size=64):
    """Gradients of the chunked forward (``backward="triton"``): the state recurrences run in Triton (forward
    recomputation storing S_n and U'_n; the reverse dS pass above), the rest is batched over all chunks in torch
    (no loop): ``dQ = dO S_n^T + tril(dO U'^T) K``, ``dK = tril(dO U'^T)^T Q + U' dS_{n+1}^T``,
    ``dW = -dU' S_n^T``, then the WY backward through ``W = T bK``, ``U = T bV``, ``T = (I + A)^{-1}``:
    ``dT = dW (bK)^T + dU (bV)^T``, ``dA = -T^T dT T^T`` (strictly lower part), ``A = strictly_lower(bK K^T)``.
    All in the accumulation dtype. Returns ``(dq, dk, dv, dbeta, dh0)``."""
    B, T, H, K = q.shape
    NH, V = k.shape[2], v.shape[-1]
    L, C = T * NH, chunk_size
    N = -(-L // C)
    ACC = acc_dtype(q.dtype)
    _, _, (w, states, vnew) = chunk_fwd_triton(q, k, v, beta, scale, h0, False, C, store_states=True)
    BK = max(16, triton.next_power_of_2(K))
    BV = min(max(16, triton.next_power_of_2(V)), 32)
    dun = torch.zeros(B, L, H, V, dtype=ACC, device=q.device)
    dsn = torch.empty(B, H, N, K, V, dtype=ACC, device=q.device)
    dh0 = torch.empty(B, H, K, V, dtype=ACC, device=q.device)
    sc = torch.tensor([scale], dtype=ACC, device=q.device)
    doc = do.contiguous()
    _chunk_bwd_dh_kernel[(triton.cdiv(V, BV), B * H)](
        q.contiguous(), k.contiguous(), w.to(ACC).contiguous(), doc, dht.contiguous() if dht is not None else doc,
        dun, dsn, dh0, sc, T, L, H, K, V, NH, C, BK, BV, TL_DTYPE[ACC], dht is not None,
        num_warps=4, num_stages=1)
    pad = N * C - L

    def chunks(x, width):   # (B, L, H, width) -> (B, H, N, C, width), zero-padded
        x = x.to(ACC).reshape(B, L, H, width)
        if pad:
            x = torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad))
        return x.reshape(B, N, C, H, width).permute(0, 3, 1, 2, 4)

    qi = torch.zeros(B, T, NH, H, K, dtype=ACC, device=q.device)
    qi[:, :, NH - 1] = q.to(ACC)
    doi = torch.zeros(B, T, NH, H, V, dtype=ACC, device=q.device)
    doi[:, :, NH - 1] = do.to(ACC) * scale
    Qc, dOc = chunks(qi, K), chunks(doi, V)
    Kc, Vc = chunks(k, K), chunks(v, V)
    bc = chunks(beta.reshape(B, L, H, 1), 1)
    Up, dUp = chunks(vnew, V), chunks(dun, V)
    Sn, dSn1 = states, dsn                                    # (B, H, N, K, V)
    low = torch.tril(torch.ones(C, C, dtype=torch.bool, device=q.device))
    dM = (dOc @ Up.transpose(-1, -2)).masked_fill(~low, 0)   # d tril(Q K^T)
    dQ = dOc @ Sn.transpose(-1, -2) + dM @ Kc
    dK = dM.transpose(-1, -2) @ Qc + Up @ dSn1.transpose(-1, -2)
    dW = -dUp @ Sn.transpose(-1, -2)
    bK, bV = bc * Kc, bc * Vc
    eye = torch.eye(C, dtype=ACC, device=q.device)
    A = torch.tril(bK @ Kc.transpose(-1, -2), -1)
    Tm = torch.linalg.solve_triangular(eye + A, eye.expand_as(A), upper=False, unitriangular=True)
    dbK = Tm.transpose(-1, -2) @ dW
    dbV = Tm.transpose(-1, -2) @ dUp
    dT = dW @ bK.transpose(-1, -2) + dUp @ bV.transpose(-1, -2)
    dA = torch.tril(-(Tm.transpose(-1, -2) @ dT @ Tm.transpose(-1, -2)), -1)
    dbK = dbK + dA @ Kc
    dK = dK + dA.transpose(-1, -2) @ bK + bc * dbK
    dbeta = (Kc * dbK).sum(-1) + (Vc * dbV).sum(-1)          # (B, H, N, C)
    dV = bc * dbV

    def unchunk(x, width):  # (B, H, N, C, width) -> (B, T, NH, H, width)
        x = x.permute(0, 2, 3, 1, 4).reshape(B, N * C, H, width)[:, :L]
        return x.reshape(B, T, NH, H, width)

    dq = unchunk(dQ, K)[:, :, NH - 1]
    dk, dv = unchunk(dK, K), unchunk(dV, V)
    db = unchunk(dbeta[..., None], 1)[..., 0]
    return dq, dk, dv, db, dh0


def chunk_delta_product_torch(q, k, v, beta, scale=1.0, h0=None, chunk_size=64):
    """The chunk equations in plain torch (differentiable; used by the backward pass and as a second reference):
    :func:`lrnnkit.kernels.gh.reference.chunk_gh_torch` without a gate. Canonical shapes as
    :func:`chunk_fwd_triton`; computes in the accumulation dtype. Returns ``(o, final_state)``."""
    return chunk_gh_torch(q, k, v, beta, None, scale=scale, initial_state=h0, chunk_size=chunk_size)


class ChunkDeltaProductFunction(torch.autograd.Function):
    """Forward: the Triton chunk kernels. Backward: gradient of :func:`chunk_delta_product_torch` (recomputed)."""

    @staticmethod
    def forward(ctx, q, k, v, beta, h0, scale, chunk_size, backward="torch"):
        o, ht = chunk_fwd_triton(q, k, v, beta, scale, h0, True, chunk_size)
        ctx.save_for_backward(q, k, v, beta, h0)
        ctx.scale, ctx.chunk_size, ctx.bwd = scale, chunk_size, backward
        return o, ht

    @staticmethod
    def backward(ctx, do, dht):
        q, k, v, beta, h0 = ctx.saved_tensors
        if ctx.bwd == "triton":
            dq, dk, dv, db, dh0 = chunk_bwd_triton(q, k, v, beta, h0, do, dht, ctx.scale, ctx.chunk_size)
            cast = lambda g, x: None if x is None else g.to(x.dtype)  # noqa: E731
            return (cast(dq, q), cast(dk, k), cast(dv, v), cast(db, beta), cast(dh0, h0), None, None, None)
        with torch.enable_grad():
            ins = [x.detach().requires_grad_(ctx.needs_input_grad[i]) if x is not None else None
                   for i, x in enumerate((q, k, v, beta, h0))]
            o, ht = chunk_delta_product_torch(*ins[:4], ctx.scale, ins[4], ctx.chunk_size)
            outs, grads = [o], [do.to(o.dtype)]
            if dht is not None:
                outs.append(ht)
                grads.append(dht.to(ht.dtype))
            need = [x for x in ins if x is not None and x.requires_grad]
            got = iter(torch.autograd.grad(outs, need, grads, allow_unused=True)) if need else iter(())
        res = []
        for x in ins:
            if x is not None and x.requires_grad:
                gx = next(got)
                res.append(None if gx is None else gx.to(x.dtype))
            else:
                res.append(None)
        return (*res, None, None, None)


def chunk_delta_product(q, k, v, beta, g=None, *, scale: float = 1.0, initial_state=None,
                        output_final_state: bool = False, normalize: bool = False, validate: bool = True,
                        chunk_size: int = 64, backward: str = "torch"):
    """Chunked GH-product layer (same contract as :func:`lrnnkit.kernels.gh.naive.delta_product_naive`),
    differentiable. ``g`` (gate) is not supported by these forward kernels (issue 6). ``backward``: "torch"
    (autograd of the recomputed chunk equations; checked on the GPU) or "triton" (Triton state passes + batched
    torch). Both are slow: to train, use :func:`lrnnkit.kernels.gh.api.chunk_gh` (or ``GHLayer("chunk")``), whose
    forward and backward are Triton kernels (:mod:`lrnnkit.kernels.gh.wy`)."""
    if backward not in ("torch", "triton"):
        raise InputError(f"backward must be 'torch' or 'triton', got {backward!r}")
    if g is not None:
        raise InputError("chunk_delta_product: the gate g is not supported by the chunked kernels; use "
                         "fused_recurrent_delta_product or delta_product_naive")
    _check_chunk(chunk_size)
    x = prepare(q, k, v, beta, None, initial_state, normalize=normalize, validate=validate)
    o, ht = ChunkDeltaProductFunction.apply(x.q, x.k, x.v, x.beta, x.h0, float(scale), chunk_size, backward)
    return o, (ht if output_final_state else None)


def time_split(q, k, v, beta, bench, chunk_size: int = 64, **wy):
    """Benchmark helper: (ms of the W/U kernel alone, ms of the whole forward minus that) on canonical inputs."""
    B, T, H, K = q.shape
    NH, V = k.shape[2], v.shape[-1]
    L = T * NH
    DT, ACC, PREC, TPREC = _kernel_config(q.dtype)
    EMU = INTERPRET and DT != ACC
    BK = max(16, triton.next_power_of_2(K))
    BVF = max(16, triton.next_power_of_2(V))
    wu_dtype = q.dtype if q.dtype in (torch.float16, torch.bfloat16) else ACC
    w = torch.empty(B, L, H, K, dtype=wu_dtype, device=q.device)
    u = torch.empty(B, L, H, V, dtype=wu_dtype, device=q.device)
    t_wy = bench(lambda: _wy_launch(k, v, beta, w, u, B, L, H, K, V, chunk_size, BK, BVF, DT, ACC, PREC, TPREC, EMU,
                                    **wy))
    t_all = bench(lambda: chunk_fwd_triton(q, k, v, beta, 1.0, None, False, chunk_size, wy=wy))
    return t_wy, t_all - t_wy
