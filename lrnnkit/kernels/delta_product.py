"""``DeltaProductLayer``: a trainable DeltaNet (n_h = 1) / DeltaProduct (n_h > 1) token mixer, used like fla's
``DeltaNet`` / ``GatedDeltaProduct`` layers (paper 001, DeltaProduct; paper 000 for the eigenvalue range).

For input x (B, T, d_model), per head h (head_dim = K = V)::

    q_t = silu(conv(W_q x))_t,  k_{t,j} = silu(conv(W_k x))_{t,j},  v_{t,j} = silu(conv(W_v x))_{t,j}  (j = 1..n_h)
    q, k <- q / ||q||, k / ||k||                    (unit keys: every factor is a generalized Householder matrix)
    beta_{t,j} = 2 sigmoid(w_b . x_t)  for eig_range = (-1, 1)    |    sigmoid(w_b . x_t)  for (0, 1)
    g_t = -exp(A_log) softplus(w_a . x_t + dt_bias)   (use_gate; a log-decay <= 0, Mamba-2 / Gated DeltaNet style)
    S <- exp(g_t) S;  S <- (I - beta_{t,j} k_{t,j} k_{t,j}^T) S + beta_{t,j} k_{t,j} v_{t,j}^T  (j = 1..n_h)
    o_t = RMSNorm(S^T q_t / sqrt(K)),   y = W_o [o^(1); ...; o^(H)]

so each token's state transition ``exp(g_t) G_{n_h} ... G_1`` has eigenvalues in [-1, 1] (eig_range (-1, 1):
paper 000, Theorem 1 needs the negative ones for parity) or [0, 1]. ``conv`` is an optional causal depthwise
convolution of width 4 (fla's ShortConvolution), reset at sequence boundaries when ``cu_seqlens`` packs several
sequences into B = 1. The parameter layout and initialisation follow fla 0.6.0's ``GatedDeltaProduct`` (read for
the conventions; the code is ours).

Backends: "chunk" (Triton kernels, forward and backward, on CUDA; on CPU tensors the same chunk equations run in
torch, since the Triton interpreter is far too slow to train with), "fused_recurrent" (Triton, inference only, no
gradient), "naive" (the sequential torch loop), "torch" (the chunk equations in torch on any device).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import InputError


class ShortConv(torch.nn.Module):
    """Causal depthwise 1-d convolution of width ``size`` over the time axis followed by SiLU (fla's
    ShortConvolution with activation='silu'): ``y_t = silu(sum_{s < size} w_s * x_{t - s})``, with x taken as 0
    before the start of each sequence (``cu_seqlens`` boundaries included)."""

    def __init__(self, channels: int, size: int = 4):
        super().__init__()
        self.size = size
        self.weight = torch.nn.Parameter(torch.empty(channels, 1, size))
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:
        B, T, D = x.shape
        if cu_seqlens is None or len(cu_seqlens) <= 2:
            xt = F.pad(x.transpose(1, 2), (self.size - 1, 0))
            y = F.conv1d(xt, self.weight.to(x.dtype), groups=D).transpose(1, 2)
        else:
            # packed sequences: zero the taps that reach back across a sequence boundary
            pos = torch.arange(T, device=x.device)
            starts = cu_seqlens[:-1].to(x.device)
            seq = torch.searchsorted(cu_seqlens[1:].to(x.device), pos, right=True)
            local = pos - starts[seq]                                  # index inside its sequence
            y = 0
            for s in range(self.size):                                 # tap s reads x_{t-s}
                shifted = F.pad(x, (0, 0, s, 0))[:, :T] if s else x
                keep = (local >= s).to(x.dtype)[None, :, None]
                y = y + shifted * keep * self.weight[:, 0, self.size - 1 - s].to(x.dtype)
        return F.silu(y)


class DeltaProductLayer(torch.nn.Module):
    """``y = DeltaProductLayer(d_model, num_heads, head_dim, n_h=1, eig_range=(-1, 1), use_gate=False,
    use_short_conv=True, backend="chunk", fp32_precision=None, keep_states=None)(x, cu_seqlens=None)``; x and y
    (B, T, d_model). ``fp32_precision``: the "chunk" backend's products for float32 inputs; ``keep_states``: its
    chunk states kept for the backward instead of recomputed (faster, more memory); both as in
    :func:`lrnnkit.kernels.gh.api.chunk_gh`. See the module text."""

    def __init__(self, d_model: int, num_heads: int, head_dim: int, n_h: int = 1, eig_range=(-1, 1),
                 use_gate: bool = False, use_short_conv: bool = True, backend: str = "chunk",
                 conv_size: int = 4, norm_eps: float = 1e-5, fp32_precision: str | None = None,
                 keep_states: bool | None = None):
        super().__init__()
        from .gh.api import check_keep_states
        check_keep_states("DeltaProductLayer", keep_states)   # refused at construction, as fp32_precision
        self.keep_states = keep_states
        if fp32_precision is not None:   # refused at construction, not at the first float32 forward
            from .gh.wy import fp32_mode
            fp32_mode(fp32_precision)
        self.fp32_precision = fp32_precision
        if tuple(eig_range) not in ((-1, 1), (0, 1)):
            raise InputError(f"DeltaProductLayer: eig_range must be (-1, 1) or (0, 1), got {eig_range!r}")
        if backend not in ("chunk", "fused_recurrent", "naive", "torch"):
            raise InputError(f"DeltaProductLayer: unknown backend {backend!r} "
                             "(choose from chunk, fused_recurrent, naive, torch)")
        for name, val in (("d_model", d_model), ("num_heads", num_heads), ("head_dim", head_dim), ("n_h", n_h)):
            if not isinstance(val, int) or val < 1:
                raise InputError(f"DeltaProductLayer: {name} must be a positive integer, got {val!r}")
        self.d_model, self.num_heads, self.head_dim, self.n_h = d_model, num_heads, head_dim, n_h
        self.eig_range, self.use_gate, self.use_short_conv, self.backend = tuple(eig_range), use_gate, \
            use_short_conv, backend
        kd = num_heads * head_dim
        self.q_proj = torch.nn.Linear(d_model, kd, bias=False)
        self.k_proj = torch.nn.Linear(d_model, kd * n_h, bias=False)
        self.v_proj = torch.nn.Linear(d_model, kd * n_h, bias=False)
        self.b_proj = torch.nn.Linear(d_model, num_heads * n_h, bias=False)
        if use_gate:
            self.a_proj = torch.nn.Linear(d_model, num_heads, bias=False)
            A = torch.empty(num_heads).uniform_(1, 16)
            self.A_log = torch.nn.Parameter(torch.log(A))
            dt = torch.exp(torch.rand(num_heads) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
            dt = torch.clamp(dt, min=1e-4)
            self.dt_bias = torch.nn.Parameter(dt + torch.log(-torch.expm1(-dt)))   # softplus^{-1}(dt)
        if use_short_conv:
            self.q_conv = ShortConv(kd, conv_size)
            self.k_conv = ShortConv(kd * n_h, conv_size)
            self.v_conv = ShortConv(kd * n_h, conv_size)
        self.o_norm = torch.nn.RMSNorm(head_dim, eps=norm_eps)
        self.o_proj = torch.nn.Linear(kd, d_model, bias=False)

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, num_heads={self.num_heads}, head_dim={self.head_dim}, n_h={self.n_h}, "
                f"eig_range={self.eig_range}, use_gate={self.use_gate}, use_short_conv={self.use_short_conv}, "
                f"backend={self.backend!r}")

    def gh_inputs(self, x: torch.Tensor, cu_seqlens=None):
        """The kernel inputs (q, k, v, beta, g) in fla's per-token layout: q (B,T,H,K), k/v (B,T,n_h,H,K),
        beta (B,T,n_h,H), g (B,T,H) or None; q and k unit vectors."""
        B, T, _ = x.shape
        H, K, n = self.num_heads, self.head_dim, self.n_h
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.use_short_conv:
            q, k, v = self.q_conv(q, cu_seqlens), self.k_conv(k, cu_seqlens), self.v_conv(v, cu_seqlens)
        else:
            q, k, v = F.silu(q), F.silu(k), F.silu(v)
        from .gh.api import l2norm
        q = l2norm(q.reshape(B, T, H, K))
        k = l2norm(k.reshape(B, T, n, H, K))
        v = v.reshape(B, T, n, H, K)
        beta = torch.sigmoid(self.b_proj(x).float()).reshape(B, T, n, H)
        if self.eig_range == (-1, 1):
            beta = 2 * beta
        g = None
        if self.use_gate:
            g = -self.A_log.float().exp() * F.softplus(self.a_proj(x).float() + self.dt_bias)
        return q, k, v, beta.to(x.dtype), g

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise InputError(f"DeltaProductLayer: expected x of shape (B, T, {self.d_model}), got {tuple(x.shape)}")
        B, T, _ = x.shape
        q, k, v, beta, g = self.gh_inputs(x, cu_seqlens)
        backend = self.backend
        if backend == "chunk" and x.device.type != "cuda":
            backend = "torch"
        if backend == "fused_recurrent":
            o = self._fused(q, k, v, beta, g, cu_seqlens)
        else:
            from .gh.api import chunk_gh
            o, _ = chunk_gh(q, k, v, beta, g, self.n_h, cu_seqlens, scale=self.head_dim ** -0.5, backend=backend,
                            fp32_precision=self.fp32_precision, keep_states=self.keep_states)
        o = self.o_norm(o.to(x.dtype)).reshape(B, T, self.num_heads * self.head_dim)
        return self.o_proj(o)

    def _fused(self, q, k, v, beta, g, cu_seqlens):
        from .gh.fused_recurrent import fused_recurrent_delta_product
        sc = self.head_dim ** -0.5
        gf = None if g is None else g.to(q.dtype)
        if cu_seqlens is None:
            return fused_recurrent_delta_product(q, k, v, beta, gf, scale=sc, validate=False)[0]
        bounds = [int(t) for t in cu_seqlens.tolist()]
        return torch.cat([fused_recurrent_delta_product(q[:, a:b], k[:, a:b], v[:, a:b], beta[:, a:b],
                                                        None if gf is None else gf[:, a:b], scale=sc,
                                                        validate=False)[0]
                          for a, b in zip(bounds[:-1], bounds[1:])], 1)
