"""Mamba's selective state-space block (Gu & Dao, 2023), with 000's extended eigenvalue range: the model 000 and
003 train where lrnnkit's Mamba-like diagonal layer (:class:`lrnnkit.layers.mixers.DiagonalMixer`, one state per
channel) stands in for it.

With ``d_inner = expand * d`` channels and ``N = d_state`` states per channel (003, App. D.1 recaps the block)::

    x, z    = W_in u                                   (d_inner each)
    x       = silu(conv1d_4(x))                        (depthwise, causal, kernel 4, with bias)
    dt, B, C = W_x x                                   (dt_rank, N, N)
    Delta   = softplus(W_dt dt + b_dt)                 (d_inner)
    s       = exp(-Delta_c exp(A_log[c, n]))           (d_inner x N, in (0, 1))
    a       = s  ([0, 1], Mamba)   or   2 s - 1  ([-1, 1], 000, Table 2 and Section 4)
    h_t     = a_t * h_{t-1} + Delta_t B_t x_t          (elementwise on the d_inner x N state)
    y       = (sum_n C_n h[., n] + D x) * silu(z);     output W_out y

The initialisation is mamba_ssm's: ``A_log[c, n] = log(n + 1)``, ``D = 1``, ``b_dt`` the inverse softplus of a
``Delta`` log-uniform in [1e-3, 1e-1], ``W_dt`` uniform in +-dt_rank^-1/2; no bias on the projections. The
recurrence and its readout run in float32 (float64 stays float64) as one selective scan
(:func:`lrnnkit.ops.diagonal.selective.selective_scan`: two fused Triton kernels, forward and backward, on CUDA, the
(d_inner x N) state of each row in registers; elsewhere the torch expression, one diagonal scan over the
``d_inner * N`` channels), or ``backend="naive"``: the same expression on the sequential reference
:func:`lrnnkit.ops.diagonal.naive.diagonal_scan_naive`. The state is ``d_state`` times the Mamba-like layer's.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..errors import InputError
from ..ops._checks import acc_dtype
from ..ops.diagonal.selective import selective_scan, selective_scan_reference, transitions
from .short_conv import ShortConvolution

__all__ = ["MambaMixer", "block_inputs", "block_output"]

DT_MIN, DT_MAX, DT_FLOOR = 1e-3, 1e-1, 1e-4      # mamba_ssm's dt_min, dt_max, dt_init_floor


class MambaMixer(nn.Module):
    """``MambaMixer(width, eig_range=(-1, 1), d_state=16, expand=2, d_conv=4, dt_rank=None, backend="scan")``:
    (B, T, width) -> (B, T, width), the block of the module text; ``dt_rank`` defaults to ``ceil(width / 16)``."""

    def __init__(self, width: int, eig_range=(-1.0, 1.0), d_state: int = 16, expand: int = 2, d_conv: int = 4,
                 dt_rank: int | None = None, backend: str = "scan"):
        super().__init__()
        for nm, v in (("width", width), ("d_state", d_state), ("expand", expand), ("d_conv", d_conv)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"MambaMixer: {nm} must be a positive integer, got {v!r}")
        if backend not in ("scan", "naive"):
            raise InputError(f"MambaMixer: backend must be 'scan' or 'naive', got {backend!r}")
        self.neg = float(tuple(eig_range)[0]) < 0
        self.backend = backend
        self.d_inner, self.d_state = expand * width, d_state
        self.dt_rank = dt_rank or math.ceil(width / 16)
        di, n, r = self.d_inner, d_state, self.dt_rank
        self.in_proj = nn.Linear(width, 2 * di, bias=False)
        self.conv = ShortConvolution(di, d_conv, bias=True, activation="silu")
        self.x_proj = nn.Linear(di, r + 2 * n, bias=False)
        self.dt_proj = nn.Linear(r, di, bias=True)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(di, 1))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, width, bias=False)
        with torch.no_grad():
            nn.init.uniform_(self.dt_proj.weight, -r ** -0.5, r ** -0.5)
            dt = torch.exp(torch.rand(di) * (math.log(DT_MAX) - math.log(DT_MIN)) + math.log(DT_MIN))
            dt = dt.clamp_min(DT_FLOOR)
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))      # softplus^-1(dt)

    def _lin(self, name: str, t: torch.Tensor, acc=None) -> torch.Tensor:
        """The projection ``name`` of ``t`` (:func:`block_inputs`' ``lin``): the module, or its weights cast to
        ``acc``."""
        m = getattr(self, name)
        if acc is None:
            return m(t)
        return F.linear(t, m.weight.to(acc), None if m.bias is None else m.bias.to(acc))

    def _inputs(self, u: torch.Tensor):
        return block_inputs(u, self._lin, self.conv, self.A_log, self.dt_rank, self.d_state)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        x, delta, A, Bm, C, z = self._inputs(u)
        if self.backend == "naive":
            from ..ops.diagonal.naive import diagonal_scan_naive
            y = selective_scan_reference(x, delta, A, Bm, C, self.neg,
                                         scan=lambda a, b: diagonal_scan_naive(a, b, validate=False))
        else:
            y = selective_scan(x, delta, A, Bm, C, self.neg)
        return block_output(y, x, z, self.D, self._lin, u.dtype)

    def transitions(self, u: torch.Tensor) -> torch.Tensor:
        """(B, T, d_inner * N, 1, 1): every state's transition ``a`` (:meth:`lrnnkit.learn.models.SequenceModel.
        transition_matrices`)."""
        _, delta, A, _, _, _ = self._inputs(u)
        a = transitions(delta, A, self.neg)
        return a.reshape(*a.shape[:2], -1)[..., None, None]


def block_inputs(u: torch.Tensor, lin, conv, A_log: torch.Tensor, rank: int, n: int) -> tuple:
    """``(x, delta, A, Bm, C, z)`` of the module text for ``u`` (..., T, width): the scan's inputs
    (:mod:`lrnnkit.ops.diagonal.selective`), the convolved input, its step and the gate (..., T, d_inner),
    ``A = -exp(A_log)``, the readouts B and C (..., T, N), in the recurrence's dtype. ``lin(name, t, acc=None)``: the
    projection ``name`` (in_proj, x_proj, dt_proj, out_proj) of ``t``, its weights cast to ``acc`` when given;
    ``conv(x)``: the convolution with its bias and SiLU. :class:`MambaMixer` passes its modules, the batched model
    (:mod:`lrnnkit.learn.batched`) each run's stacked weights."""
    acc = acc_dtype(u.dtype)
    x, z = lin("in_proj", u).chunk(2, -1)
    x = conv(x).to(acc)
    dt, Bm, C = lin("x_proj", x.to(u.dtype)).to(acc).split([rank, n, n], -1)
    delta = F.softplus(lin("dt_proj", dt, acc))
    return x, delta, -torch.exp(A_log.to(acc)), Bm, C, z.to(acc)


def block_output(y: torch.Tensor, x: torch.Tensor, z: torch.Tensor, D: torch.Tensor, lin, dtype) -> torch.Tensor:
    """``W_out ((y + D x) silu(z))`` in ``dtype``, from the scan's readout ``y``; ``D`` broadcasting against ``x``
    (:func:`block_inputs` for ``lin``)."""
    return lin("out_proj", ((y + D.to(x.dtype) * x) * F.silu(z)).to(dtype))
