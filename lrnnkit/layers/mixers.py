"""The mixers of :class:`lrnnkit.learn.models.SequenceModel` (the module docstring there states each one's
equations: paper 000, eq. 1 and Table 2; 001; 002, eq. 5-6; 003; 004), and its MLP block, chosen by layer kind from
:data:`MIXERS` (``layer=`` -> a builder), not from a chain of conditions. The diagonal mixer runs
:func:`lrnnkit.ops.diagonal.gated.gated_scan` (its gate, the scan and the output's silu gate: the torch expression
over :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan`, whose forward and backward run the chunk-parallel Triton
scan on CUDA, or two fused Triton kernels there where switched on),
the block-diagonal mixer :func:`lrnnkit.ops.block_diagonal.differentiable.block_diagonal_scan` (forward and backward
on the fused recurrent Triton kernel on CUDA); elsewhere both scan in torch (the diagonal one step by step or by
log-depth doubling, by shape: :mod:`lrnnkit.ops.diagonal.parallel`; the block-diagonal one by doubling). The
bilinear mixer runs a renormalised doubling scan in torch; :func:`affine_scan` is the doubling scan of the affine maps
in torch (diagonal or block form) that the tests and benchmarks compare with; ``backend="naive"``: lrnnkit's sequential
kernel references."""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..errors import InputError
from ..ops.block_diagonal.differentiable import block_diagonal_scan
from ..ops.diagonal.gated import eigenvalues, gated_scan
from ..ops.linear_scan import doubling_scan
from .delta_product import DeltaProductLayer
from .fixed_point import FixedPointMixer
from .mamba import MambaMixer
from .short_conv import ShortConvolution

__all__ = ["MIXERS", "build_mixer", "parse_eig_range", "affine_scan", "gh_layer", "DiagonalMixer",
           "BlockDiagonalMixer", "BilinearMixer", "MLP"]


def parse_eig_range(r) -> tuple:
    """``(0, 1)`` / ``(-1, 1)`` from a tuple or a string ``"0,1"`` / ``"-1,1"``."""
    if isinstance(r, str):
        try:
            r = tuple(float(x) for x in r.split(","))
        except ValueError:
            raise InputError(f"bad eigenvalue range {r!r}: expected 0,1 or -1,1") from None
    r = tuple(float(x) for x in r)
    if r not in ((0.0, 1.0), (-1.0, 1.0)):
        raise InputError(f"eigenvalue range must be 0,1 or -1,1, got {r!r}")
    return r


# ------------------------------------------------------------------------------------------------ scans
#: all states of ``h_t = a_t h_{t-1} + b_t`` by the log-depth doubling scan in torch, elementwise or in block form
#: (``matrix=True``), differentiable by autograd: :func:`lrnnkit.ops.linear_scan.doubling_scan`, under the name
#: :mod:`lrnnkit.learn.models` exports
affine_scan = doubling_scan


def _acc(x: torch.Tensor) -> torch.Tensor:
    """The recurrence's dtype: float64 stays float64 (the tests' exact checks), anything else becomes float32."""
    return x if x.dtype == torch.float64 else x.float()


def _in_acc(x: torch.Tensor):
    """A region where autocast is off on ``x``'s device, so products of :func:`_acc` tensors stay in its dtype: under
    bf16 autocast ``einsum`` and ``@`` would otherwise cast a float32 recurrence back to bf16 (the Triton scans
    take float32 and need no such region)."""
    return torch.autocast(x.device.type, enabled=False)


# ------------------------------------------------------------------------------------------------ mixers
class DiagonalMixer(nn.Module):
    def __init__(self, width: int, eig_range=(-1.0, 1.0), short_conv: bool = True, backend: str = "scan"):
        super().__init__()
        self.neg = parse_eig_range(eig_range)[0] < 0
        self.backend = backend
        self.conv = ShortConvolution(width, 4) if short_conv else None
        self.in_proj = nn.Linear(width, 3 * width)          # dt, b, z
        self.w = nn.Parameter(torch.zeros(width))            # s = exp(-softplus(dt) exp(w))
        self.out_proj = nn.Linear(width, width)

    def _proj(self, x):
        """``(dt, b, z)`` side by side: the input projection of the (short-convolved) input."""
        return self.in_proj(self.conv(x) if self.conv is not None else x)

    def _ab(self, x):
        dt, b, z = _acc(self._proj(x)).chunk(3, -1)
        return eigenvalues(dt, _acc(self.w), self.neg), b, z

    def forward(self, x):
        if self.backend == "naive":
            from ..ops.diagonal.naive import diagonal_scan_naive
            a, b, z = self._ab(x)
            return self.out_proj((diagonal_scan_naive(a, b, validate=False) * F.silu(z)).to(x.dtype))
        return self.out_proj(gated_scan(self._proj(x), self.w, self.neg, x.dtype))   # _ab's gate, the scan, silu(z)

    def transitions(self, x):
        a, _, _ = self._ab(x)
        return a[..., None, None]                            # (B, T, D, 1, 1)


def gh_layer(width: int, heads: int, head_dim: int, n_h: int = 1, eig_range=(-1.0, 1.0), gate: bool = False,
             short_conv: bool = True, output_gate: bool = True, backend: str = "auto") -> DeltaProductLayer:
    """The GH mixer of :class:`SequenceModel`: :class:`lrnnkit.layers.DeltaProductLayer` with fla's
    ``GatedDeltaProduct`` keywords (expand_v = 1); ``backend`` "auto" / "chunk" (Triton on CUDA, the chunk
    equations in torch on CPU), "torch", "naive"."""
    if backend not in ("auto", "chunk", "torch", "naive"):
        raise InputError(f"backend {backend!r} does not apply to GH layers (choose from auto, chunk, torch, naive)")
    return DeltaProductLayer(hidden_size=width, expand_v=1, head_dim=head_dim, num_heads=heads,
                             num_householder=n_h, allow_neg_eigval=parse_eig_range(eig_range)[0] < 0,
                             use_forget_gate=gate, use_short_conv=short_conv, use_output_gate=output_gate,
                             mode="chunk" if backend == "auto" else backend)


def pnorm_columns(A: torch.Tensor, p: float) -> torch.Tensor:
    """002, eq. 6: each column v of each block becomes ``v / max(1, ||v||_p)``."""
    n = A.abs().clamp_min(1e-12).pow(p).sum(-2, keepdim=True).pow(1.0 / p)
    return A / torch.clamp(n, min=1.0)


class BlockDiagonalMixer(nn.Module):
    def __init__(self, width: int, block_size: int = 8, p: float = 1.2, short_conv: bool = False,
                 backend: str = "scan"):
        super().__init__()
        if width % block_size:
            raise InputError(f"block-diagonal: width {width} is not a multiple of the block size {block_size}")
        self.NB, self.BS, self.p, self.backend = width // block_size, block_size, p, backend
        self.conv = ShortConvolution(width, 4) if short_conv else None
        self.A_proj = nn.Linear(width, self.NB * block_size * block_size)
        self.b_proj = nn.Linear(width, width)
        self.out_proj = nn.Linear(width, width)

    def _Ab(self, x):
        u = self.conv(x) if self.conv is not None else x
        B, T, _ = x.shape
        A = pnorm_columns(_acc(self.A_proj(u)).reshape(B, T, self.NB, self.BS, self.BS), self.p)
        b = _acc(self.b_proj(u)).reshape(B, T, self.NB, self.BS)
        return A, b

    def forward(self, x):
        A, b = self._Ab(x)
        if self.backend == "naive":
            from ..ops.block_diagonal.naive import block_diagonal_scan_naive
            h = block_diagonal_scan_naive(A, b, validate=False)
        else:
            h = block_diagonal_scan(A, b)
        return self.out_proj(h.reshape(x.shape[0], x.shape[1], -1).to(x.dtype))

    def transitions(self, x):
        return self._Ab(x)[0]


class BilinearMixer(nn.Module):
    """004's pure bilinear recurrence ``h_t = W(x_t) h_{t-1}``, ``W(x) = sum_i z_i(x) W_i``, NO additive term
    (004, Section 2: the hidden state is then scale-invariant, so it may be normalised at any step without
    changing its direction); ``h_0`` learned. The scan renormalises every partial product by a positive scalar
    and the readout is ``h / ||h||`` per head, so long inputs neither overflow nor underflow. The transitions and the
    scan run in float32 (float64 stays) under bf16 autocast as well: only the input and output projections take
    the autocast dtype."""

    def __init__(self, width: int, heads: int, head_dim: int, rank: int | None = None, backend: str = "scan"):
        super().__init__()
        self.H, self.d, self.backend = heads, head_dim, backend
        self.r = rank or width
        self.z_proj = nn.Linear(width, self.r)
        W = torch.randn(self.r, heads, head_dim, head_dim) / (head_dim * math.sqrt(self.r))
        self.W = nn.Parameter(W)
        self.h0 = nn.Parameter(torch.randn(heads, head_dim) / math.sqrt(head_dim))
        self.out_proj = nn.Linear(heads * head_dim, width)

    def _A(self, x):
        z = _acc(self.z_proj(x))
        with _in_acc(z):        # the transitions and the scan in float32 under autocast too
            return z, torch.einsum("btr,rhij->bthij", z, _acc(self.W))

    def forward(self, x):
        z, A = self._A(x)
        B, T = x.shape[:2]
        h0 = _acc(self.h0)
        with _in_acc(A):
            if self.backend == "naive":
                from ..ops.bilinear.naive import bilinear_scan_naive
                hs = [bilinear_scan_naive(z, _acc(self.W[:, i]), None, h0[i].expand(B, self.d).contiguous(),
                                          validate=False) for i in range(self.H)]
                h = torch.stack(hs, 2)                          # (B, T, H, d)
            else:
                h = _linear_scan(A, h0)
            h = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        return self.out_proj(h.reshape(B, T, -1).to(x.dtype))

    def transitions(self, x):
        return self._A(x)[1]


def _linear_scan(A: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Directions of ``h_t = A_t h_{t-1}`` (A (B, T, H, d, d), h0 (H, d)): the doubling scan of
    :func:`affine_scan` with ``b = 0`` except ``b_1 = A_1 h_0``; after every step each position's pair (a, b) is
    divided by the same positive scalar (its largest entry), which keeps the direction of every ``h_t``."""
    B, T = A.shape[:2]
    b = torch.zeros(A.shape[:-1], dtype=A.dtype, device=A.device)
    b = torch.cat([torch.einsum("bhij,hj->bhi", A[:, 0], h0)[:, None], b[:, 1:]], 1)
    a = A
    s = 1
    while s < T:
        nb = torch.einsum("btnij,btnj->btni", a[:, s:], b[:, :-s]) + b[:, s:]
        na = a[:, s:] @ a[:, :-s]
        b = torch.cat([b[:, :s], nb], 1)
        a = torch.cat([a[:, :s], na], 1)
        c = torch.maximum(a.abs().amax((-1, -2)), b.abs().amax(-1)).clamp_min(1e-30).detach()
        a, b = a / c[..., None, None], b / c[..., None]
        s *= 2
    return b


# ------------------------------------------------------------------------------------------------ model
class MLP(nn.Module):
    def __init__(self, width: int, mult: int = 4):
        super().__init__()
        self.up = nn.Linear(width, mult * width)
        self.down = nn.Linear(mult * width, width)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


#: layer kind -> the builder of its mixer, called with the SequenceModel's fields ``(width, heads, head_dim, n_h,
#: eig, gate, short_conv, output_gate, block_size, backend)`` and, for the fixed-point layer, the optional
#: ``fp_train_iters`` (its training cap) and ``fp_iteration`` (its stopping rule, ``"paper"`` when absent or None);
#: ``scan`` is the non-GH backend (``"scan"`` for auto)
MIXERS = {
    "diagonal": lambda f, scan: DiagonalMixer(f["width"], f["eig"], f["short_conv"], scan),
    "deltanet": lambda f, scan: gh_layer(f["width"], f["heads"], f["head_dim"], f["n_h"], f["eig"], f["gate"],
                                         f["short_conv"], f["output_gate"], f["backend"]),
    "deltaproduct": lambda f, scan: gh_layer(f["width"], f["heads"], f["head_dim"], f["n_h"], f["eig"], f["gate"],
                                             f["short_conv"], f["output_gate"], f["backend"]),
    "block-diagonal": lambda f, scan: BlockDiagonalMixer(f["width"], f["block_size"], backend=scan),
    # 003: n_h reflections, block_size = the matrix state's rows
    "fixed-point": lambda f, scan: FixedPointMixer(f["width"], f["heads"], f["head_dim"], f["n_h"], f["eig"],
                                                   f["block_size"], f["backend"], f.get("fp_train_iters"),
                                                   iteration=f.get("fp_iteration") or "paper"),
    "bilinear": lambda f, scan: BilinearMixer(f["width"], f["heads"], f["head_dim"], backend=scan),
    # Mamba's block (d_state 16, expand 2, its own convolution: short_conv does not apply)
    "mamba": lambda f, scan: MambaMixer(f["width"], f["eig"], backend=scan),
}


def build_mixer(layer: str, **fields) -> nn.Module:
    """The mixer of kind ``layer`` (:data:`MIXERS`) from the SequenceModel's fields (``fp_train_iters`` and
    ``fp_iteration``: the fixed-point layer's, optional)."""
    if layer not in MIXERS:
        raise InputError(f"unknown layer kind {layer!r} (choose from {', '.join(MIXERS)})")
    return MIXERS[layer](fields, "scan" if fields["backend"] == "auto" else fields["backend"])
