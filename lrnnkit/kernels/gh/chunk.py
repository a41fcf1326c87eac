"""Chunked (WY / UT form) kernels of the GH-product layer, with a backward pass (autograd.Function).

DESIGN.md "The chunked delta rule" (Yang et al. 2024; fla's ``chunk_delta_rule``): DeltaProduct (paper 001) is run
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

Backward: the state recurrence is recomputed by :func:`chunk_delta_product_torch` (the same chunk equations in
torch, with ``torch.linalg.solve_triangular`` for T) and differentiated by torch autograd. It is exact (the
gradient of the same function) but not a fused kernel; see benchmarks/RESULTS.md for its cost. The gate ``g`` is
not supported here (use the fused recurrent kernel or the naive reference).
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .._checks import acc_dtype
from .._triton import INTERPRET, TL_DTYPE, check_device, tl, triton
from .inputs import prepare

CHUNK_SIZES = (16, 32, 64)


@triton.jit
def _op(x, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr):
    """A dot operand rounded to DT. Under the interpreter (EMU) bf16/fp16 dots are wrong in triton 3.6 (numpy has
    no bfloat16), so the rounded operand is widened back to ACC: same rounding of the operands, float32 product."""
    if EMU:
        return x.to(DT).to(ACC)
    else:
        return x.to(DT)


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
    twice but fewer tiles are live at once."""
    BC: tl.constexpr = 16
    NB: tl.constexpr = BT // BC
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
    # diagonal blocks as an (NB, BC, BC) tile
    nb = tl.arange(0, NB)
    ii = tl.arange(0, BC)
    A4 = tl.reshape(A, [NB, BC, NB, BC])
    same = nb[:, None, None, None] == nb[None, None, :, None]
    Ad = tl.sum(tl.where(same, A4, 0.0), 2)
    i3 = ii[None, :, None]
    j3 = ii[None, None, :]
    Td = tl.where(i3 == j3, 1.0, 0.0) + tl.zeros([NB, BC, BC], dtype=ACC)
    for i in range(1, BC):
        a_i = tl.sum(tl.where(i3 == i, Ad, 0.0), 1)            # row i of every diagonal block: (NB, BC)
        upd = tl.sum(a_i[:, :, None] * Td, 1)                  # sum_j A[i, j] T[j, :]
        Td = tl.where(i3 == i, Td - upd[:, None, :], Td)
    D = tl.reshape(tl.where(same, Td[:, :, None, :], 0.0), [BT, BT])
    if NB > 1:
        Ao = tl.where((r[:, None] // BC) > (r[None, :] // BC), A, 0.0)
        N = tl.dot(D, Ao, input_precision=TPREC, out_dtype=ACC)
        M = D + tl.dot(tl.dot(N, N, input_precision=TPREC, out_dtype=ACC), D, input_precision=TPREC, out_dtype=ACC)
        Tm = M - tl.dot(N, M, input_precision=TPREC, out_dtype=ACC)
    else:
        Tm = D
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
    Tm = tl.where(r[:, None] == r[None, :], 1.0, 0.0).to(ACC)
    for i in range(1, BT):
        a_i = tl.sum(tl.where(r[:, None] == i, A, 0.0), 0)
        upd = tl.sum(a_i[:, None] * Tm, 0)
        Tm = tl.where(r[:, None] == i, Tm - upd[None, :], Tm)
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
def _chunk_fwd_kernel(q_ptr, k_ptr, w_ptr, u_ptr, h0_ptr, o_ptr, ht_ptr, scale_ptr, T, L,
                      H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH: tl.constexpr, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      HAS_H0: tl.constexpr, STORE_HT: tl.constexpr, EMU: tl.constexpr):
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
        Sd = _op(S, DT, ACC, EMU)
        un = uu - tl.dot(ww, Sd, input_precision=PREC, out_dtype=ACC)
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
                     state_warps=None):
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
    _chunk_fwd_kernel[(triton.cdiv(V, BV), B * H)](qc, kc, w, u, h0c, o, ht, sc, T, L, H, K, V, NH, BT,
                                                    BK, BV, TL_DTYPE[DT], TL_DTYPE[ACC], PREC, h0 is not None,
                                                    output_final_state, EMU, num_warps=nws,
                                                    num_stages=1 if fp32_ops else 2)
    return o, (ht if output_final_state else None)


def chunk_delta_product_torch(q, k, v, beta, scale=1.0, h0=None, chunk_size=64):
    """The chunk equations in plain torch (differentiable; used by the backward pass and as a second reference).
    Canonical shapes as :func:`chunk_fwd_triton`; computes in the accumulation dtype. Returns ``(o, final_state)``."""
    B, T, H, K = q.shape
    NH, V = k.shape[2], v.shape[-1]
    dt = acc_dtype(q.dtype)
    L = T * NH
    C = chunk_size
    N = -(-L // C)
    pad = N * C - L
    kf = k.to(dt).reshape(B, L, H, K)
    vf = v.to(dt).reshape(B, L, H, V)
    bf = beta.to(dt).reshape(B, L, H)
    qi = torch.zeros(B, T, NH, H, K, dtype=dt, device=q.device)
    qi[:, :, NH - 1] = q.to(dt)
    qi = qi.reshape(B, L, H, K)
    if pad:  # zero keys and betas: identity factors that write nothing
        kf = torch.nn.functional.pad(kf, (0, 0, 0, 0, 0, pad))
        vf = torch.nn.functional.pad(vf, (0, 0, 0, 0, 0, pad))
        bf = torch.nn.functional.pad(bf, (0, 0, 0, pad))
        qi = torch.nn.functional.pad(qi, (0, 0, 0, 0, 0, pad))
    kc = kf.reshape(B, N, C, H, K).permute(0, 3, 1, 2, 4)       # (B,H,N,C,K)
    vc = vf.reshape(B, N, C, H, V).permute(0, 3, 1, 2, 4)
    bc = bf.reshape(B, N, C, H).permute(0, 3, 1, 2)[..., None]  # (B,H,N,C,1)
    qc = qi.reshape(B, N, C, H, K).permute(0, 3, 1, 2, 4)
    eye = torch.eye(C, dtype=dt, device=q.device)
    A = torch.tril((bc * kc) @ kc.transpose(-1, -2), -1)
    W = torch.linalg.solve_triangular(eye + A, bc * kc, upper=False, unitriangular=True)
    U = torch.linalg.solve_triangular(eye + A, bc * vc, upper=False, unitriangular=True)
    S = h0.to(dt) if h0 is not None else torch.zeros(B, H, K, V, dtype=dt, device=q.device)
    causal = torch.tril(torch.ones(C, C, dtype=torch.bool, device=q.device))
    outs = []
    for n in range(N):
        Kn, Qn = kc[:, :, n], qc[:, :, n]
        Un = U[:, :, n] - W[:, :, n] @ S
        outs.append(Qn @ S + (Qn @ Kn.transpose(-1, -2)).masked_fill(~causal, 0) @ Un)
        S = S + Kn.transpose(-1, -2) @ Un
    O = torch.stack(outs, 2).reshape(B, H, N * C, V)[:, :, :L].permute(0, 2, 1, 3)   # (B, L, H, V)
    O = O.reshape(B, T, NH, H, V)[:, :, NH - 1] * scale
    return O, S


class ChunkDeltaProductFunction(torch.autograd.Function):
    """Forward: the Triton chunk kernels. Backward: gradient of :func:`chunk_delta_product_torch` (recomputed)."""

    @staticmethod
    def forward(ctx, q, k, v, beta, h0, scale, chunk_size):
        o, ht = chunk_fwd_triton(q, k, v, beta, scale, h0, True, chunk_size)
        ctx.save_for_backward(q, k, v, beta, h0)
        ctx.scale, ctx.chunk_size = scale, chunk_size
        return o, ht

    @staticmethod
    def backward(ctx, do, dht):
        q, k, v, beta, h0 = ctx.saved_tensors
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
        return (*res, None, None)


def chunk_delta_product(q, k, v, beta, g=None, *, scale: float = 1.0, initial_state=None,
                        output_final_state: bool = False, normalize: bool = False, validate: bool = True,
                        chunk_size: int = 64):
    """Chunked GH-product layer (same contract as :func:`lrnnkit.kernels.gh.naive.delta_product_naive`),
    differentiable. ``g`` (gate) is not supported by the chunked kernels."""
    if g is not None:
        raise InputError("chunk_delta_product: the gate g is not supported by the chunked kernels; use "
                         "fused_recurrent_delta_product or delta_product_naive")
    _check_chunk(chunk_size)
    x = prepare(q, k, v, beta, None, initial_state, normalize=normalize, validate=validate)
    o, ht = ChunkDeltaProductFunction.apply(x.q, x.k, x.v, x.beta, x.h0, float(scale), chunk_size)
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
