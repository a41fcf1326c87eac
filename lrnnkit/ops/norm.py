"""The per-head output normalisations of DeltaNet-style layers (fla's ``RMSNorm`` and ``FusedRMSNormGated``, same
parameter names, so state dicts move between the two). Computed in float32 (float64 stays float64)::

    RMSNorm(o)          = o / sqrt(mean(o^2) + eps) * w
    GatedRMSNorm(o, z)  = o / sqrt(mean(o^2) + eps) * w * silu(z)         (the output gate, silu(z) = z sigmoid(z))

over the last axis; the result has o's dtype. The gate is what lets a layer switch its read-out off token by
token: without it, the normalised state read-out of a DeltaProduct layer could not learn the S3 word problem in
benchmarks/bench_layer_vs_fla.py (docs/learning.rst, "Why the output gate matters").

The backward, per row of width D, with r = 1 / sqrt(mean(x^2) + eps), xhat = r x, sig = sigmoid(z), s = z sig
(s = 1 ungated), u = w s (w = 1 without weight), so that y = xhat u::

    dxhat = dy u
    dx    = r (dxhat - xhat mean(dxhat xhat))        (d r / d x_j = -r^3 x_j / D)
    dw    = sum over rows of dy xhat s
    dz    = dy xhat w sig (1 + z (1 - sig))          (silu'(z) = sig + z sig (1 - sig))

Two implementations of the same equations: :func:`rms_norm_torch` (the reference, autograd, any device) and one
Triton pass each way, which ``backend="auto"`` runs on CUDA tensors (float64 excepted): the forward reads x (and
z) once, writes y and the per-row r; the backward reads x, z, dy and r, writes dx, dz and one partial sum of dw per
program, summed afterwards in torch (no atomics: the same numbers every run).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import InputError

BACKENDS = ("auto", "triton", "torch")

_KERNELS = None


def _acc(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float64 else x.float()


def rms_norm_torch(x: torch.Tensor, weight: torch.Tensor | None, eps: float, gate: torch.Tensor | None = None):
    """The reference (see the module text), plain torch."""
    xf = _acc(x)
    y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
    if weight is not None:
        y = y * weight.to(y.dtype)
    if gate is not None:
        y = y * F.silu(gate.to(y.dtype))
    return y.to(x.dtype)


#: the largest entry a vector keeps before :func:`rescale_large` divides it: 2^56, so that its squares (at most
#: 2^112) summed over up to 2^14 entries stay inside float32 (2^128), and an RMSNorm's eps is negligible on either side
RESCALE_ABOVE = 2.0 ** 56


def rescale_large(x: torch.Tensor) -> torch.Tensor:
    """``x`` with every vector along the last axis whose largest entry passes :data:`RESCALE_ABOVE` divided by the
    power of two ``2^k`` (k >= 0, the smallest) that brings it to at most that; other vectors unchanged. Exact (a
    power of two) and, since ``RMSNorm(c x) = RMSNorm(x)`` for ``c > 0`` wherever eps is negligible, as it is beyond
    2^56, an RMSNorm of the result is the RMSNorm of ``x``, without the float32 overflow of ``mean(x^2)`` past
    about 1.8e19 that sends a plain one to 0 (a state that grows, as 002's block-diagonal recurrence may for p > 1:
    ``002:claim-section-3.3.small-p``). The scale is a constant of the autograd graph (no gradient)."""
    m = x.detach().abs().amax(-1, keepdim=True)
    k = torch.ceil(torch.log2(_acc(m) / RESCALE_ABOVE)).clamp_min(0)
    return x * torch.exp2(-k).to(x.dtype)


def _kernels():
    """Compile-on-first-use: the Triton kernels (imported lazily, as every kernel module of lrnnkit). Arithmetic in
    the dtype of the r buffer (float32, float64 for float64 x); eps is a compile-time constant so that it enters
    float64 arithmetic unrounded."""
    global _KERNELS
    if _KERNELS is not None:
        return _KERNELS
    from ._triton import tl, triton

    @triton.jit
    def rms_norm_fwd(x, z, w, y, rstd, N, D, RPR, EPS: tl.constexpr, HAS_W: tl.constexpr, HAS_Z: tl.constexpr,
            BR: tl.constexpr, BD: tl.constexpr, RUNS: tl.constexpr, SAFE: tl.constexpr, ABOVE: tl.constexpr):
        """With SAFE, each row first scaled by rescale_large's power of two sc (a constant of the graph): y = x r'
        w with r' = sc / sqrt(mean((sc x)^2) + eps), stored as the row's rstd, so the backward is unchanged."""
        acc = rstd.dtype.element_ty
        o_r = tl.program_id(0) * BR + tl.arange(0, BR)
        o_d = tl.arange(0, BD)
        m = (o_r < N)[:, None] & (o_d < D)[None, :]
        off = o_r.to(tl.int64)[:, None] * D + o_d[None, :]
        xx = tl.load(x + off, mask=m, other=0).to(acc)
        if SAFE:
            mx = tl.max(tl.abs(xx), 1)
            sc = tl.exp2(-tl.maximum(tl.ceil(tl.log2(tl.maximum(mx / ABOVE, 1e-30))), 0.0))
            xs = xx * sc[:, None]
            r = sc / tl.sqrt(tl.sum(xs * xs, 1) / D + EPS)
        else:
            r = 1.0 / tl.sqrt(tl.sum(xx * xx, 1) / D + EPS)
        yy = xx * r[:, None]
        if HAS_W:       # w (D,), or with RUNS w (runs, D), row i taking run i // RPR's
            if RUNS:
                yy = yy * tl.load(w + (o_r // RPR).to(tl.int64)[:, None] * D + o_d[None, :], mask=m, other=0).to(acc)
            else:
                yy = yy * tl.load(w + o_d, mask=o_d < D, other=0).to(acc)[None, :]
        if HAS_Z:
            zz = tl.load(z + off, mask=m, other=0).to(acc)
            yy = yy * zz / (1.0 + tl.exp(-zz))
        tl.store(y + off, yy.to(y.dtype.element_ty), mask=m)
        tl.store(rstd + o_r, r, mask=o_r < N)

    @triton.jit
    def rms_norm_bwd(x, z, w, dy, rstd, dx, dz, dwp, N, D, RPR, HAS_W: tl.constexpr, HAS_Z: tl.constexpr,
            BR: tl.constexpr, BD: tl.constexpr, RUNS: tl.constexpr):
        acc = rstd.dtype.element_ty
        pid = tl.program_id(0)
        o_r = pid * BR + tl.arange(0, BR)
        o_d = tl.arange(0, BD)
        m = (o_r < N)[:, None] & (o_d < D)[None, :]
        off = o_r.to(tl.int64)[:, None] * D + o_d[None, :]
        r = tl.load(rstd + o_r, mask=o_r < N, other=0)
        xh = tl.load(x + off, mask=m, other=0).to(acc) * r[:, None]
        g = tl.load(dy + off, mask=m, other=0).to(acc)
        gw = g                                            # dy w
        if HAS_W:
            if RUNS:
                gw = g * tl.load(w + (o_r // RPR).to(tl.int64)[:, None] * D + o_d[None, :], mask=m, other=0).to(acc)
            else:
                gw = g * tl.load(w + o_d, mask=o_d < D, other=0).to(acc)[None, :]
        dxh = gw                                          # dy u
        gs = g                                            # dy s
        if HAS_Z:
            zz = tl.load(z + off, mask=m, other=0).to(acc)
            sg = 1.0 / (1.0 + tl.exp(-zz))
            dxh = gw * zz * sg
            gs = g * zz * sg
            tl.store(dz + off, (gw * xh * sg * (1.0 + zz * (1.0 - sg))).to(dz.dtype.element_ty), mask=m)
        c = tl.sum(dxh * xh, 1) / D
        tl.store(dx + off, (r[:, None] * (dxh - xh * c[:, None])).to(dx.dtype.element_ty), mask=m)
        if HAS_W:
            tl.store(dwp + pid.to(tl.int64) * D + o_d, tl.sum(gs * xh, 0), mask=o_d < D)

    _KERNELS = (rms_norm_fwd, rms_norm_bwd)
    return _KERNELS


def _launch(N: int, D: int, runs: int):
    """``(BR, BD, programs)`` of :func:`~lrnnkit.ops._triton.row_blocks`, BR cut to divide the rows of one run (a
    power of two, so the largest that divides N / runs) so that no program holds rows of two runs."""
    from ._triton import row_blocks, triton
    BR, BD, _ = row_blocks(N, D)
    if runs > 1:
        rpr = N // runs
        BR = min(BR, rpr & -rpr)
    return BR, BD, triton.cdiv(N, BR)


class _RMSNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, gate, eps, runs=1, safe=False):
        x = x.contiguous()
        z = gate.contiguous() if gate is not None else None
        D = x.shape[-1]
        N = x.numel() // D
        BR, BD, P = _launch(N, D, runs)
        y = torch.empty_like(x)
        rstd = torch.empty(N, dtype=_acc(x).dtype, device=x.device)
        fwd, _ = _kernels()
        fwd[(P,)](x, x if z is None else z, x if weight is None else weight, y, rstd, N, D, max(1, N // runs), eps,
                  weight is not None, z is not None, BR, BD, runs > 1, safe, RESCALE_ABOVE, num_warps=4)
        ctx.save_for_backward(x, z, weight, rstd)
        ctx.runs = runs
        return y

    @staticmethod
    def backward(ctx, dy):
        x, z, weight, rstd = ctx.saved_tensors
        D = x.shape[-1]
        N = x.numel() // D
        runs = ctx.runs
        BR, BD, P = _launch(N, D, runs)
        dx = torch.empty_like(x)
        dz = None if z is None else torch.empty_like(z)
        dwp = None if weight is None else torch.empty(P, D, dtype=rstd.dtype, device=x.device)
        _, bwd = _kernels()
        bwd[(P,)](x, x if z is None else z, x if weight is None else weight, dy.contiguous(), rstd, dx,
                  dx if dz is None else dz, rstd if dwp is None else dwp, N, D, max(1, N // runs), weight is not None,
                  z is not None, BR, BD, runs > 1, num_warps=4)
        # each program's rows are one run's (_launch): its partial sum goes to that run
        dw = None if weight is None else dwp.reshape(runs, -1, D).sum(1).reshape(weight.shape).to(weight.dtype)
        return dx, dw, dz, None, None, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None, eps: float, gate: torch.Tensor | None = None,
             backend: str = "auto") -> torch.Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight (* silu(gate))`` along the last axis in float32, x's dtype out,
    differentiable in x, weight and gate (module text). ``backend``: "auto" (Triton on CUDA tensors but float64,
    the reference elsewhere), "triton" (also CPU tensors under the Triton interpreter), "torch"."""
    if backend not in BACKENDS:
        raise InputError(f"rms_norm: unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if backend == "torch" or (backend == "auto" and not (x.is_cuda and x.dtype != torch.float64)) or x.numel() == 0:
        return rms_norm_torch(x, weight, eps, gate)
    D = x.shape[-1]
    if (weight is not None and tuple(weight.shape) != (D,)) or (gate is not None and gate.shape != x.shape):
        raise InputError(f"rms_norm: weight must have shape ({D},) and gate x's shape {tuple(x.shape)}, got "
                         f"{None if weight is None else tuple(weight.shape)} and "
                         f"{None if gate is None else tuple(gate.shape)}")
    from ._triton import check_device
    check_device(x, weight, gate)
    return _RMSNormFn.apply(x, weight, gate, float(eps))


def rms_norm_runs_torch(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """R runs' scale-safe RMSNorms at once (:class:`~lrnnkit.layers.norm.ScaleSafeRMSNorm`: ``torch.nn.RMSNorm(D)``
    with eps the dtype's machine epsilon, after :func:`rescale_large`), run r's weight on run r's rows: ``x`` (R,
    ..., D), ``weight`` (R, D). The reference of :func:`rms_norm_runs`."""
    w = weight.reshape(weight.shape[0], *([1] * (x.ndim - 2)), weight.shape[-1])
    return F.rms_norm(rescale_large(x), (x.shape[-1],)) * w.to(x.dtype)


def rms_norm_runs(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The Triton path of :func:`rms_norm_runs_torch` (same contract, differentiable in x and weight): one pass
    each way, the power-of-two rescale of :func:`rescale_large` and each row's run weight read inside the kernel
    (module text's equations with ``r' = sc r``, ``sc`` the row's scale, in place of r; each run's weight
    gradient summed over its own rows)."""
    from ._triton import check_device
    check_device(x, weight)
    R, D = weight.shape
    if x.shape[0] != R or x.shape[-1] != D:
        raise InputError(f"rms_norm_runs: x {tuple(x.shape)} must be (R, ..., D) for weight {tuple(weight.shape)}")
    if x.numel() == 0:
        return rms_norm_runs_torch(x, weight)
    return _RMSNormFn.apply(x, weight.contiguous(), None, float(torch.finfo(x.dtype).eps), R, True)
