"""Mamba's selective scan with its readout, in two Triton kernels, forward and backward (Gu & Dao, 2023, Algorithm 2;
003, App. D.1; 000, Table 2 for the range [-1, 1]; :class:`lrnnkit.layers.mamba.MambaMixer`): from the convolved
input ``x`` and the step ``delta`` (B, T, Di), the state matrix ``A`` (Di, N) (negative: ``A = -exp(A_log)``) and
the input-dependent ``B_t``, ``C_t`` (B, T, N),

    s_t = exp(delta_t A),   a_t = 2 s_t - 1  ([-1, 1])  or  a_t = s_t  ([0, 1]),
    h_t = a_t * h_{t-1} + (delta_t x_t) B_t^T   (h_{-1} = 0, Di x N per row),   y_t = h_t C_t,

in float32 (float64 for float64 inputs). The torch expression of the same (:func:`selective_scan_reference`: the
transitions and inputs as (B, T, Di, N) tensors, one diagonal scan over the Di N channels, then the readout) moves
about a dozen tensors of the state's size through memory forward and backward: on a GPU that is most of the Mamba
block's step (``benchmarks/bench_mamba_step.py``; the numbers are in benchmarks/RESULTS.md, "learning at paper
scale"). Here the forward reads the (B, T, Di) and (B, T, N) inputs once and writes ``y`` and,
where a backward follows, the states ``h``; the backward reads them once more (``h_t`` carried from step t + 1)
and runs the adjoint of the recurrence in reverse (:mod:`lrnnkit.ops.linear_scan`):

    lambda_t = dy_t C_t^T + a_{t+1} * lambda_{t+1},   dC_t = sum_c dy_t[c] h_t[c, .],
    ds_t = c lambda_t * h_{t-1}  (c = 2 or 1),   ddelta_t = sum_n (ds_t s_t A + lambda_t B_t x_t),
    dx_t = delta_t sum_n lambda_t B_t,   dB_t = sum_c lambda_t[c, .] delta_t[c] x_t[c],
    dA = sum_{rows, t} ds_t s_t delta_t.

The sums over channels (``dB``, ``dC``) and over rows (``dA``) are taken in torch from per-program partial sums (no
atomics: the same bits every run). One program per (row, block of channels), the (block x N) state in registers,
one pass over the sequence each way. :data:`FUSED_ON_CUDA` chooses it for CUDA inputs (:func:`selective_scan`);
tests compare it with the reference in the Triton interpreter, values and gradients in float64."""
from __future__ import annotations

import os

import torch

from .._checks import acc_dtype
from .._triton import TL_DTYPE, tl, triton
from .parallel import diagonal_scan

__all__ = ["FUSED_ON_CUDA", "selective_scan", "selective_scan_fused", "selective_scan_reference", "transitions"]

#: whether :func:`selective_scan` runs the fused kernels on CUDA inputs (else the torch expression): on, unless
#: the environment sets ``LRNNKIT_FUSED_SELECTIVE=0`` (read at import); checked and timed on a GPU
#: (benchmarks/bench_mamba_step.py, benchmarks/RESULTS.md, "learning at paper scale").
FUSED_ON_CUDA = os.environ.get("LRNNKIT_FUSED_SELECTIVE", "1") != "0"


def _per_run_A(A: torch.Tensor, ndim: int) -> torch.Tensor:
    """``A`` (Di, N), or (R, Di, N) for R runs, shaped to broadcast against (..., T, Di, N) of ``ndim`` axes whose
    leading axes are (R, B)."""
    return A if A.ndim == 2 else A.reshape(A.shape[0], *([1] * (ndim - 3)), *A.shape[1:])


def transitions(delta, A, neg: bool) -> torch.Tensor:
    """``a`` (..., T, Di, N) of the module text, ``s`` or ``2 s - 1`` with ``s = exp(delta A)``; ``A`` (Di, N), or
    (R, Di, N) with leading axes (R, B) of ``delta``: run r's on its rows."""
    s = torch.exp(delta[..., None] * _per_run_A(A, delta.ndim + 1))
    return 2 * s - 1 if neg else s


def selective_scan_reference(x, delta, A, Bm, C, neg: bool, scan=diagonal_scan) -> torch.Tensor:
    """The torch expression (module text), differentiable by autograd: ``y`` (..., T, Di) in the inputs' dtype for x
    (..., T, Di) (leading axes (B,), or (R, B) with ``A`` (R, Di, N): run r's on its rows); ``scan``: the diagonal
    scan over (rows, T, Di N) (default :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan`)."""
    a = transitions(delta, A, neg)
    b = (delta * x)[..., None] * Bm[..., None, :]
    T, di, n = a.shape[-3:]
    h = scan(a.reshape(-1, T, di * n), b.reshape(-1, T, di * n)).reshape(b.shape)
    return (h * C[..., None, :]).sum(-1)


@triton.jit
def _program(A_ptr, ROWS_PER_RUN, DI: tl.constexpr, N: tl.constexpr, BD: tl.constexpr, NP: tl.constexpr,
             ACC: tl.constexpr):
    """This program's row, channel block and state indices, their masks, and its run's A on the block."""
    i_b = tl.program_id(0).to(tl.int64)      # row offsets (i_b T + t) Di N pass 2^31 at large batches
    rd = tl.program_id(1) * BD + tl.arange(0, BD)
    rn = tl.arange(0, NP)
    md, mn = rd < DI, rn < N
    m2 = md[:, None] & mn[None, :]
    A_run = A_ptr + (i_b // ROWS_PER_RUN) * DI * N
    A = tl.load(A_run + rd[:, None] * N + rn[None, :], mask=m2, other=0.0).to(ACC)
    return i_b, rd, rn, md, mn, m2, A


@triton.jit
def _sel_fwd_kernel(x_ptr, dl_ptr, A_ptr, B_ptr, C_ptr, y_ptr, h_ptr, T, ROWS_PER_RUN, DI: tl.constexpr,
                    N: tl.constexpr, BD: tl.constexpr, NP: tl.constexpr, ACC: tl.constexpr, NEG: tl.constexpr,
                    STORE_H: tl.constexpr):
    i_b, rd, rn, md, mn, m2, A = _program(A_ptr, ROWS_PER_RUN, DI, N, BD, NP, ACC)
    h = tl.zeros([BD, NP], dtype=ACC)
    for t in range(T):
        base = i_b * T + t
        dl = tl.load(dl_ptr + base * DI + rd, mask=md, other=0.0).to(ACC)
        xv = tl.load(x_ptr + base * DI + rd, mask=md, other=0.0).to(ACC)
        Bt = tl.load(B_ptr + base * N + rn, mask=mn, other=0.0).to(ACC)
        Ct = tl.load(C_ptr + base * N + rn, mask=mn, other=0.0).to(ACC)
        s = tl.exp(dl[:, None] * A)
        if NEG:
            a = 2.0 * s - 1.0
        else:
            a = s
        h = a * h + (dl * xv)[:, None] * Bt[None, :]
        if STORE_H:                                     # the states, for the backward
            tl.store(h_ptr + (base * DI + rd)[:, None] * N + rn[None, :], h.to(h_ptr.dtype.element_ty), mask=m2)
        tl.store(y_ptr + base * DI + rd, tl.sum(h * Ct[None, :], axis=1).to(y_ptr.dtype.element_ty), mask=md)


@triton.jit
def _sel_bwd_kernel(x_ptr, dl_ptr, A_ptr, B_ptr, C_ptr, h_ptr, dy_ptr, dx_ptr, ddl_ptr, dAp_ptr, dBp_ptr, dCp_ptr,
                    T, ROWS_PER_RUN, DI: tl.constexpr, N: tl.constexpr, BD: tl.constexpr, NP: tl.constexpr,
                    ACC: tl.constexpr, NEG: tl.constexpr):
    i_b, rd, rn, md, mn, m2, A = _program(A_ptr, ROWS_PER_RUN, DI, N, BD, NP, ACC)
    nblk = tl.num_programs(1)
    part = (i_b * nblk + tl.program_id(1)) * T          # this program's rows of the (B, blocks, T, N) partials
    lam = tl.zeros([BD, NP], dtype=ACC)
    a_next = tl.zeros([BD, NP], dtype=ACC)
    dA = tl.zeros([BD, NP], dtype=ACC)
    hoff = (i_b * T + T - 1) * DI + rd                  # launched for T > 0 only
    h = tl.load(h_ptr + hoff[:, None] * N + rn[None, :], mask=m2, other=0.0).to(ACC)
    for i in range(T):
        t = T - 1 - i
        base = i_b * T + t
        dl = tl.load(dl_ptr + base * DI + rd, mask=md, other=0.0).to(ACC)
        xv = tl.load(x_ptr + base * DI + rd, mask=md, other=0.0).to(ACC)
        g = tl.load(dy_ptr + base * DI + rd, mask=md, other=0.0).to(ACC)
        Bt = tl.load(B_ptr + base * N + rn, mask=mn, other=0.0).to(ACC)
        Ct = tl.load(C_ptr + base * N + rn, mask=mn, other=0.0).to(ACC)
        poff = (base * DI - DI + rd)[:, None] * N + rn[None, :]          # h_{t-1}; h_t is carried from step t+1
        h_prev = tl.load(h_ptr + poff, mask=m2 & (t > 0), other=0.0).to(ACC)
        lam = g[:, None] * Ct[None, :] + a_next * lam
        tl.store(dCp_ptr + (part + t) * N + rn, tl.sum(g[:, None] * h, axis=0), mask=mn)
        s = tl.exp(dl[:, None] * A)
        if NEG:
            a = 2.0 * s - 1.0
            ds = 2.0 * lam * h_prev
        else:
            a = s
            ds = lam * h_prev
        lb = tl.sum(lam * Bt[None, :], axis=1)
        tl.store(ddl_ptr + base * DI + rd, (tl.sum(ds * s * A, axis=1) + lb * xv).to(ddl_ptr.dtype.element_ty),
                 mask=md)
        tl.store(dx_ptr + base * DI + rd, (dl * lb).to(dx_ptr.dtype.element_ty), mask=md)
        tl.store(dBp_ptr + (part + t) * N + rn, tl.sum(lam * (dl * xv)[:, None], axis=0), mask=mn)
        dA += ds * s * dl[:, None]
        a_next = a
        h = h_prev
    tl.store(dAp_ptr + (i_b * DI + rd)[:, None] * N + rn[None, :], dA, mask=m2)


def _blocks(di: int, n: int) -> tuple:
    """(BD, NP): channels per program (a state of at most 2048 numbers in registers) and N padded to a power of 2."""
    NP = triton.next_power_of_2(n)
    return max(1, min(triton.next_power_of_2(di), 2048 // NP, 64)), NP


class _SelectiveScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, delta, A, Bm, C, neg, store):
        Bsz, T, di = x.shape
        n = A.shape[-1]
        y = torch.empty_like(x)
        h = torch.empty(Bsz, T, di, n, dtype=x.dtype, device=x.device) if store else y
        if Bsz and T:
            BD, NP = _blocks(di, n)
            _sel_fwd_kernel[(Bsz, triton.cdiv(di, BD))](x, delta, A, Bm, C, y, h, T, Bsz // A.shape[0], di, n, BD,
                                                        NP, TL_DTYPE[x.dtype], neg, store)
        ctx.save_for_backward(x, delta, A, Bm, C, h)
        ctx.neg = neg
        return y

    @staticmethod
    def backward(ctx, dy):
        x, delta, A, Bm, C, h = ctx.saved_tensors
        Bsz, T, di = x.shape
        R, n = A.shape[0], A.shape[-1]
        BD, NP = _blocks(di, n)
        nblk = triton.cdiv(di, BD)
        dx, ddl = torch.empty_like(x), torch.empty_like(delta)
        dAp = torch.zeros(Bsz, di, n, dtype=x.dtype, device=x.device)
        dBp = torch.zeros(Bsz, nblk, T, n, dtype=x.dtype, device=x.device)
        dCp = torch.zeros_like(dBp)
        if Bsz and T:
            _sel_bwd_kernel[(Bsz, nblk)](x, delta, A, Bm, C, h, dy.contiguous(), dx, ddl, dAp, dBp, dCp, T, Bsz // R,
                                         di, n, BD, NP, TL_DTYPE[x.dtype], ctx.neg)
        else:
            dx.zero_()
            ddl.zero_()
        return dx, ddl, dAp.reshape(R, Bsz // R, di, n).sum(1), dBp.sum(1), dCp.sum(1), None, None


def selective_scan_fused(x, delta, A, Bm, C, neg: bool) -> torch.Tensor:
    """The two kernels (module text): ``x``, ``delta`` (..., T, Di), ``A`` (Di, N), ``Bm``, ``C`` (..., T, N), all
    cast to the accumulation dtype (float32; float64 stays); leading axes (B,), or (R, B) with ``A`` (R, Di, N): run
    r's on its rows. Returns ``y`` (..., T, Di) in that dtype, differentiable in all five."""
    lead = x.shape[:-2]
    runs = A.ndim == 3
    if x.ndim != (4 if runs else 3) or delta.shape != x.shape or A.ndim not in (2, 3) \
            or A.shape[-2] != x.shape[-1] or (runs and A.shape[0] != x.shape[0]) \
            or Bm.shape != (*x.shape[:-1], A.shape[-1]) or C.shape != Bm.shape:
        raise ValueError(f"selective_scan_fused: x, delta {tuple(x.shape)}, {tuple(delta.shape)} must be (B, T, Di) "
                         f"(or (R, B, T, Di)), A {tuple(A.shape)} (Di, N) (or (R, Di, N)), B and C {tuple(Bm.shape)}, "
                         f"{tuple(C.shape)} (B, T, N) (or (R, B, T, N))")
    acc = acc_dtype(x.dtype)
    T = x.shape[-2]
    rows = [t.to(acc).reshape(-1, T, t.shape[-1]).contiguous() for t in (x, delta, Bm, C)]
    A3 = (A if runs else A[None]).to(acc).contiguous()
    # the states are kept for a backward only (not under no_grad, where needs_input_grad still says True)
    store = torch.is_grad_enabled() and any(t.requires_grad for t in (x, delta, A, Bm, C))
    y = _SelectiveScan.apply(rows[0], rows[1], A3, rows[2], rows[3], bool(neg), store)
    return y.reshape(*lead, T, x.shape[-1])


def selective_scan(x, delta, A, Bm, C, neg: bool) -> torch.Tensor:
    """``y`` of the module text (shapes as :func:`selective_scan_fused`): the fused kernels on CUDA where
    :data:`FUSED_ON_CUDA`, else :func:`selective_scan_reference`."""
    if x.is_cuda and FUSED_ON_CUDA:
        return selective_scan_fused(x, delta, A, Bm, C, neg)
    return selective_scan_reference(x, delta, A, Bm, C, neg)
