"""The diagonal mixer's gated scan in two Triton kernels, forward and backward (000, eq. 1 with Mamba's input-dependent
diagonal; :class:`lrnnkit.layers.mixers.DiagonalMixer`): from the input projection ``y = (dt, b, z)`` (N, T, 3D)
and the per-channel decay parameter ``w`` (R, D) of R runs (rows ``r B .. r B + B - 1`` are run r's),

    s_t = exp(-softplus(dt_t) exp(w)),   a_t = 2 s_t - 1  ([-1, 1])  or  a_t = s_t  ([0, 1]),
    h_t = a_t h_{t-1} + b_t  (h_{-1} = 0),   out_t = h_t silu(z_t),

in float32 (float64 for float64 inputs), ``out`` stored in the caller's dtype. The unfused torch expression of the
same (:func:`gated_scan_reference`, what the mixer runs on the CPU) is a dozen elementwise passes over (N, T, D)
forward and twice that backward, plus the chunk's and the scan's copies: most of a small model's training step
on a GPU (``benchmarks/profile_step.py``; the measurement is in benchmarks/RESULTS.md, "learning at paper scale").
Here the forward reads ``y`` once and writes ``out`` and ``h`` (``h`` only where a backward will follow); the
backward reads ``dout``, ``dt`` and ``z`` of ``y`` and ``h`` once (``h_t`` carried from step t + 1) and writes
``dy``, running the adjoint of the recurrence in reverse (:mod:`lrnnkit.ops.linear_scan`):

    g_t = dout_t silu(z_t),   lambda_t = g_t + a_{t+1} lambda_{t+1},   db_t = lambda_t,
    da_t = lambda_t h_{t-1},  ddt_t = c da_t s_t (-exp(w)) softplus'(dt_t)  (c = 2 or 1),
    dz_t = dout_t h_t silu'(z_t),   dw = exp(w) sum_{rows of the run, t} c da_t s_t (-softplus(dt_t)).

``dw``'s sum over the run's rows is taken in torch from per-row partial sums (no atomics: the same bits every run).
One program per (row, block of channels), the state in registers, one pass over the sequence each way.
:data:`FUSED_ON_CUDA` chooses it for CUDA inputs (:func:`gated_scan`); tests compare it with the reference in the
Triton interpreter, values and gradients."""
from __future__ import annotations

import os

import torch
import torch.nn.functional as F

from .._checks import acc_dtype
from .._triton import TL_DTYPE, tl, triton
from .parallel import diagonal_scan

__all__ = ["FUSED_ON_CUDA", "eigenvalues", "gated_scan", "gated_scan_fused", "gated_scan_reference"]

#: whether :func:`gated_scan` runs the fused kernels on CUDA inputs (else the torch expression): on, unless the
#: environment sets ``LRNNKIT_FUSED_GATE=0`` (read at import). Checked and timed on a GPU before it was turned on
#: (benchmarks/fused_gate_seeds.py, benchmarks/bench_scans.py; benchmarks/RESULTS.md, "learning at paper scale").
FUSED_ON_CUDA = os.environ.get("LRNNKIT_FUSED_GATE", "1") != "0"


def eigenvalues(dt: torch.Tensor, w: torch.Tensor, neg: bool) -> torch.Tensor:
    """``a = 2 s - 1`` ([-1, 1]) or ``a = s`` ([0, 1]) with ``s = exp(-softplus(dt) exp(w))``, ``w`` broadcasting
    against ``dt`` (module text): the gate in torch, for :func:`gated_scan_reference` and the mixer's transitions."""
    s = torch.exp(-F.softplus(dt) * torch.exp(w))
    return 2 * s - 1 if neg else s


def gated_scan_reference(y: torch.Tensor, w: torch.Tensor, neg: bool, out_dtype=None) -> torch.Tensor:
    """The torch expression (module text), differentiable by autograd: ``y`` (..., T, 3D) whose leading axes hold
    R B rows in run order ((R, B) or (N,)), ``w`` (R, D) or (D,); ``out_dtype``: the output's (default ``y``'s)."""
    acc = acc_dtype(y.dtype)
    lead, (T, D3) = y.shape[:-2], y.shape[-2:]
    R = 1 if w.ndim == 1 else w.shape[0]
    dt, b, z = y.reshape(R, -1, T, D3).to(acc).chunk(3, -1)
    a = eigenvalues(dt, w.to(acc).reshape(R, 1, 1, -1), neg)
    h = diagonal_scan(a.reshape(-1, T, D3 // 3), b.reshape(-1, T, D3 // 3)).reshape(z.shape)
    return (h * F.silu(z)).reshape(*lead, T, D3 // 3).to(out_dtype or y.dtype)


@triton.jit
def _softplus(x):
    """softplus(x) = max(x, 0) + log(1 + exp(-|x|)), the log of a number near 1 by its series (no log1p in the
    interpreter); x itself above the threshold, as torch."""
    e = tl.exp(-tl.abs(x))
    lg = tl.where(e < 1e-4, e - 0.5 * e * e, tl.log(1.0 + e))
    return tl.where(x > 20.0, x, tl.maximum(x, 0.0) + lg)


@triton.jit
def _program(e_ptr, ROWS_PER_RUN, D: tl.constexpr, BD: tl.constexpr, ACC: tl.constexpr):
    """This program's row, channel block, its mask, and exp(w) of the row's run on it."""
    i_n = tl.program_id(0).to(tl.int64)      # row offsets (i_n T + t) 3D pass 2^31 at large batches
    rd = tl.program_id(1) * BD + tl.arange(0, BD)
    md = rd < D
    return i_n, rd, md, tl.load(e_ptr + (i_n // ROWS_PER_RUN) * D + rd, mask=md, other=0.0).to(ACC)


@triton.jit
def _gate(dt, e, NEG: tl.constexpr):
    """softplus(dt), s = exp(-softplus(dt) e) and the eigenvalue a (2 s - 1 for [-1, 1], else s)."""
    sp = _softplus(dt)
    s = tl.exp(-sp * e)
    if NEG:
        a = 2.0 * s - 1.0
    else:
        a = s
    return sp, s, a


@triton.jit
def _gated_fwd_kernel(y_ptr, e_ptr, o_ptr, h_ptr, T, ROWS_PER_RUN, D: tl.constexpr, BD: tl.constexpr,
                      ACC: tl.constexpr, NEG: tl.constexpr, STORE_H: tl.constexpr):
    i_n, rd, md, e = _program(e_ptr, ROWS_PER_RUN, D, BD, ACC)
    h = tl.zeros([BD], dtype=ACC)
    for t in range(T):
        row = (i_n * T + t) * 3 * D
        dt = tl.load(y_ptr + row + rd, mask=md, other=0.0).to(ACC)
        b = tl.load(y_ptr + row + D + rd, mask=md, other=0.0).to(ACC)
        z = tl.load(y_ptr + row + 2 * D + rd, mask=md, other=0.0).to(ACC)
        _, _, a = _gate(dt, e, NEG)
        h = a * h + b
        off = (i_n * T + t) * D + rd
        if STORE_H:                                     # the states, for the backward
            tl.store(h_ptr + off, h.to(h_ptr.dtype.element_ty), mask=md)
        sig = 1.0 / (1.0 + tl.exp(-z))
        tl.store(o_ptr + off, (h * z * sig).to(o_ptr.dtype.element_ty), mask=md)


@triton.jit
def _gated_bwd_kernel(y_ptr, e_ptr, h_ptr, do_ptr, dy_ptr, dwp_ptr, T, ROWS_PER_RUN, D: tl.constexpr,
                      BD: tl.constexpr, ACC: tl.constexpr, NEG: tl.constexpr):
    i_n, rd, md, e = _program(e_ptr, ROWS_PER_RUN, D, BD, ACC)
    lam = tl.zeros([BD], dtype=ACC)
    a_next = tl.zeros([BD], dtype=ACC)
    de = tl.zeros([BD], dtype=ACC)
    h = tl.load(h_ptr + (i_n * T + T - 1) * D + rd, mask=md, other=0.0).to(ACC)      # launched for T > 0 only
    for i in range(T):
        t = T - 1 - i
        row = (i_n * T + t) * 3 * D
        off = (i_n * T + t) * D + rd
        dt = tl.load(y_ptr + row + rd, mask=md, other=0.0).to(ACC)
        z = tl.load(y_ptr + row + 2 * D + rd, mask=md, other=0.0).to(ACC)
        h_prev = tl.load(h_ptr + off - D, mask=md & (t > 0), other=0.0).to(ACC)    # h_t is carried from step t+1
        g_out = tl.load(do_ptr + off, mask=md, other=0.0).to(ACC)
        sig = 1.0 / (1.0 + tl.exp(-z))
        lam = g_out * z * sig + a_next * lam
        sp, s, a = _gate(dt, e, NEG)
        ds = (2.0 if NEG else 1.0) * lam * h_prev
        dsp_dt = tl.where(dt > 20.0, 1.0, 1.0 / (1.0 + tl.exp(-dt)))
        ddt = ds * s * (-e) * dsp_dt
        de += ds * s * (-sp)
        dz = g_out * h * sig * (1.0 + z * (1.0 - sig))
        tl.store(dy_ptr + row + rd, ddt.to(dy_ptr.dtype.element_ty), mask=md)
        tl.store(dy_ptr + row + D + rd, lam.to(dy_ptr.dtype.element_ty), mask=md)
        tl.store(dy_ptr + row + 2 * D + rd, dz.to(dy_ptr.dtype.element_ty), mask=md)
        a_next = a
        h = h_prev
    tl.store(dwp_ptr + i_n * D + rd, de, mask=md)


def _block(D: int) -> int:
    return min(triton.next_power_of_2(D), 128)


class _GatedScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, w, neg, out_dtype, store):
        N, T, D3 = y.shape
        D, R = D3 // 3, w.shape[0]
        acc = acc_dtype(y.dtype)
        e = torch.exp(w.to(acc)).contiguous()
        out = torch.empty(N, T, D, dtype=out_dtype, device=y.device)
        h = torch.empty(N, T, D, dtype=acc, device=y.device) if store else out
        if N and T:
            BD = _block(D)
            _gated_fwd_kernel[(N, triton.cdiv(D, BD))](y, e, out, h, T, N // R, D, BD, TL_DTYPE[acc], neg, store)
        ctx.save_for_backward(y, e, h)
        ctx.neg = neg
        return out

    @staticmethod
    def backward(ctx, dout):
        y, e, h = ctx.saved_tensors
        N, T, D3 = y.shape
        D, R = D3 // 3, e.shape[0]
        dy = torch.empty_like(y)
        dwp = torch.zeros(N, D, dtype=e.dtype, device=y.device)
        if N and T:
            BD = _block(D)
            _gated_bwd_kernel[(N, triton.cdiv(D, BD))](y, e, h, dout.contiguous(), dy, dwp, T, N // R, D, BD,
                                                       TL_DTYPE[e.dtype], ctx.neg)
        dw = dwp.reshape(R, N // R, D).sum(1) * e
        return dy, dw, None, None, None


def gated_scan_fused(y: torch.Tensor, w: torch.Tensor, neg: bool, out_dtype=None) -> torch.Tensor:
    """The two kernels (module text): ``y`` (N, T, 3D), ``w`` (R, D) with R dividing N (or (D,): one run);
    returns ``out`` (N, T, D) in ``out_dtype`` (default ``y``'s), differentiable in ``y`` and ``w``."""
    w2 = w.reshape(1, -1) if w.ndim == 1 else w
    if y.ndim != 3 or y.shape[-1] != 3 * w2.shape[-1] or y.shape[0] % w2.shape[0]:
        raise ValueError(f"gated_scan_fused: y {tuple(y.shape)} must be (N, T, 3D) with R | N for w "
                         f"{tuple(w.shape)} (R, D)")
    # the states are kept for a backward only (not under no_grad, where needs_input_grad still says True)
    store = torch.is_grad_enabled() and (y.requires_grad or w.requires_grad)
    return _GatedScan.apply(y.contiguous(), w2, bool(neg), out_dtype or y.dtype, store)


def gated_scan(y: torch.Tensor, w: torch.Tensor, neg: bool, out_dtype=None) -> torch.Tensor:
    """``out`` of the module text for ``y`` (..., T, 3D) with leading axes (R, B) or (N,) and ``w`` (R, D) or (D,):
    the fused kernels on CUDA where :data:`FUSED_ON_CUDA`, else :func:`gated_scan_reference`."""
    if y.is_cuda and FUSED_ON_CUDA:
        lead = y.shape[:-2]
        out = gated_scan_fused(y.reshape(-1, *y.shape[-2:]), w, neg, out_dtype)
        return out.reshape(*lead, *out.shape[-2:])
    return gated_scan_reference(y, w, neg, out_dtype)
