"""``l2norm``: rows scaled to unit length, fla's ``l2norm`` (the key / query normalisation of DeltaNet-style layers,
paper 001: every factor ``I - beta k k^T`` is a generalized Householder matrix only for ``||k|| <= 1``)::

    y = x / sqrt(||x||_2^2 + eps)                    along the last axis, eps = 1e-6 (fla's, inside the root)
    dx = r (dy - y <y, dy>),   r = 1 / sqrt(||x||_2^2 + eps)

computed in float32 (float64 stays float64), the result in x's dtype. Two implementations of the same equations:
:func:`l2norm_torch` (the reference, autograd, any device) and the Triton pass forward and backward (one read of x,
one write of y; the backward reads x and dy and recomputes r), which ``backend="auto"`` runs on CUDA tensors
(float64 excepted).
"""
from __future__ import annotations

import torch

from ..errors import InputError

BACKENDS = ("auto", "triton", "torch")
EPS = 1e-6

_KERNELS = None


def l2norm_torch(x: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """The reference (see the module text)."""
    xf = x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
    return (xf * torch.rsqrt(xf.square().sum(-1, keepdim=True) + eps)).to(x.dtype)


def _kernels():
    """Compile-on-first-use: the Triton kernels (imported lazily, as every kernel module of lrnnkit)."""
    global _KERNELS
    if _KERNELS is not None:
        return _KERNELS
    from ._triton import tl, triton

    @triton.jit
    def l2norm_fwd(x, y, N, D, eps, BR: tl.constexpr, BD: tl.constexpr):
        o_r = tl.program_id(0) * BR + tl.arange(0, BR)
        o_d = tl.arange(0, BD)
        m = (o_r < N)[:, None] & (o_d < D)[None, :]
        off = o_r.to(tl.int64)[:, None] * D + o_d[None, :]
        xx = tl.load(x + off, mask=m, other=0).to(tl.float32)
        r = 1.0 / tl.sqrt(tl.sum(xx * xx, 1) + eps)
        tl.store(y + off, (xx * r[:, None]).to(y.dtype.element_ty), mask=m)

    @triton.jit
    def l2norm_bwd(x, dy, dx, N, D, eps, BR: tl.constexpr, BD: tl.constexpr):
        o_r = tl.program_id(0) * BR + tl.arange(0, BR)
        o_d = tl.arange(0, BD)
        m = (o_r < N)[:, None] & (o_d < D)[None, :]
        off = o_r.to(tl.int64)[:, None] * D + o_d[None, :]
        xx = tl.load(x + off, mask=m, other=0).to(tl.float32)
        g = tl.load(dy + off, mask=m, other=0).to(tl.float32)
        r = 1.0 / tl.sqrt(tl.sum(xx * xx, 1) + eps)
        yy = xx * r[:, None]
        tl.store(dx + off, (r[:, None] * (g - yy * tl.sum(yy * g, 1)[:, None])).to(dx.dtype.element_ty), mask=m)

    _KERNELS = (l2norm_fwd, l2norm_bwd)
    return _KERNELS


def _launch(kernel, D: int, N: int, *args):
    from ._triton import row_blocks
    BR, BD, programs = row_blocks(N, D)
    kernel[(programs,)](*args, BR, BD, num_warps=4)


class _L2NormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, eps):
        x = x.contiguous()
        D = x.shape[-1]
        N = x.numel() // max(D, 1)
        y = torch.empty_like(x)
        fwd, _ = _kernels()
        _launch(fwd, D, N, x, y, N, D, eps)
        ctx.save_for_backward(x)
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        D = x.shape[-1]
        N = x.numel() // max(D, 1)
        dx = torch.empty_like(x)
        _, bwd = _kernels()
        _launch(bwd, D, N, x, dy.contiguous(), dx, N, D, ctx.eps)
        return dx, None


def l2norm(x: torch.Tensor, eps: float = EPS, backend: str = "auto") -> torch.Tensor:
    """``x / sqrt(||x||^2 + eps)`` along the last axis, differentiable (module text). ``backend``: "auto" (Triton
    on CUDA tensors but float64, the reference elsewhere), "triton" (also CPU tensors under the Triton interpreter),
    "torch"."""
    if backend not in BACKENDS:
        raise InputError(f"l2norm: unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if backend == "torch" or (backend == "auto" and not (x.is_cuda and x.dtype != torch.float64)) or x.numel() == 0:
        return l2norm_torch(x, eps)
    from ._triton import check_device
    check_device(x)
    return _L2NormFn.apply(x, float(eps))
