"""Trainable sequence models whose recurrent layers are LRNNs (paper 000, eq. 1: ``H_t = A(x_t) H_{t-1} + B(x_t)``).

:class:`SequenceModel` = embedding -> ``layers`` x [pre-norm LRNN mixer + residual (+ pre-norm MLP + residual)] ->
final norm -> linear head. The mixer (``layer=``) is one of

* ``"diagonal"``: Mamba-style ``A(x) = Diag(s(x))`` with ``s = exp(-softplus(dt(x)) exp(w))`` in (0, 1), or
  ``Diag(2 s(x) - 1)`` in (-1, 1) (000, Table 2); ``B(x) = W_b x``; output ``W_o (h * silu(W_z x))``.
* ``"deltanet"`` / ``"deltaproduct"`` (001): per head ``A(x) = G_{n_h} ... G_1`` with
  ``G_j = I - beta_j k_j k_j^T``, unit keys, ``beta = sigmoid`` ([0, 1]) or ``2 sigmoid`` ([-1, 1]);
  ``B(x) = sum_j beta_j k_j v_j^T`` (threaded through the factors); output ``RMSNorm(S^T q)`` per head. DeltaNet is
  ``n_h = 1``. ``gate=True`` multiplies the state by ``exp(g_t)``, ``g = -exp(a) softplus(W_g x + dt)`` first
  (the gated variants, fla's Gated DeltaProduct convention). Computed by lrnnkit's kernels
  (:mod:`lrnnkit.kernels.gh`): the sequential reference on CPU, the chunked kernels on CUDA.
* ``"block-diagonal"`` (002, eq. 5-6): ``A(x) = diag(A^(1), ..., A^(h))`` with blocks of size ``b`` whose columns
  are ``v / max(1, ||v||_p)`` (``p = 1.2`` as in 002, Section 4.4), ``B(x) = W_b x``.
* ``"bilinear"`` (004: ``h_t = W(x_t) h_{t-1}`` with ``W(x) = sum_i z_i(x) W_i`` linear in the input and no
  additive term): per head a ``d x d`` matrix; the readout is the direction ``h / ||h||`` (004's scale
  invariance). Unconstrained spectrum (``eig_range`` does not apply).

Non-GH mixers run a log-depth (Hillis-Steele) scan of the affine maps ``h -> A h + b`` in torch, differentiable;
``backend="naive"`` runs lrnnkit's sequential kernel references instead (:mod:`lrnnkit.kernels.diagonal.naive`, ...),
which the tests use as the oracle for values and gradients.

:meth:`SequenceModel.transition_matrices` returns, per layer, the per-token transition matrices ``A(x_t)`` as a
tensor (B, T, H, n, n): H heads of n x n (diagonal: D heads of 1 x 1; block-diagonal: h blocks of b x b).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..errors import InputError

__all__ = ["SequenceModel", "LAYER_KINDS", "affine_scan", "parse_eig_range"]

from .kinds import LAYER_KINDS  # noqa: E402  (torch-free, for the CLI)


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
def affine_scan(a: torch.Tensor, b: torch.Tensor, matrix: bool = False) -> torch.Tensor:
    """All states of ``h_t = a_t h_{t-1} + b_t`` (``h_0 = 0``) along dim 1 by a Hillis-Steele doubling scan.

    ``matrix=False``: elementwise ``a, b`` (B, T, ...). ``matrix=True``: ``a`` (B, T, N, n, n), ``b`` (B, T, N, n).
    Composition of affine maps (first earlier, then later): ``(a2, b2) o (a1, b1) = (a2 a1, a2 b1 + b2)``; after
    the step with stride s, position t holds the composition of the maps t-2s+1 .. t. ``ceil(log2 T)`` steps of
    batched torch ops, differentiable by autograd (a hand-written scan: the kernels' Triton scans have no backward).
    """
    T = a.shape[1]
    s = 1
    while s < T:
        if matrix:
            nb = torch.einsum("btnij,btnj->btni", a[:, s:], b[:, :-s]) + b[:, s:]
            na = a[:, s:] @ a[:, :-s]
        else:
            nb = a[:, s:] * b[:, :-s] + b[:, s:]
            na = a[:, s:] * a[:, :-s]
        b = torch.cat([b[:, :s], nb], 1)
        a = torch.cat([a[:, :s], na], 1)
        s *= 2
    return b


def _acc(x: torch.Tensor) -> torch.Tensor:
    """The recurrence's dtype: float64 stays float64 (the tests' exact checks), anything else becomes float32."""
    return x if x.dtype == torch.float64 else x.float()


class ShortConv(nn.Module):
    """Causal depthwise 1-D convolution (kernel ``size``) + SiLU, as the short convolutions of DeltaNet / Mamba
    (docs/conventions.rst: a layer may read a short causal window of its inputs)."""

    def __init__(self, dim: int, size: int = 4):
        super().__init__()
        self.size = size
        self.conv = nn.Conv1d(dim, dim, size, groups=dim, bias=False)

    def forward(self, x):                        # (B, T, C)
        y = self.conv(F.pad(x.transpose(1, 2), (self.size - 1, 0)))
        return F.silu(y.transpose(1, 2))


# ------------------------------------------------------------------------------------------------ mixers
class DiagonalMixer(nn.Module):
    def __init__(self, width: int, eig_range=(-1.0, 1.0), short_conv: bool = True, backend: str = "scan"):
        super().__init__()
        self.neg = parse_eig_range(eig_range)[0] < 0
        self.backend = backend
        self.conv = ShortConv(width) if short_conv else None
        self.in_proj = nn.Linear(width, 3 * width)          # dt, b, z
        self.w = nn.Parameter(torch.zeros(width))            # s = exp(-softplus(dt) exp(w))
        self.out_proj = nn.Linear(width, width)

    def _ab(self, x):
        u = self.conv(x) if self.conv is not None else x
        dt, b, z = _acc(self.in_proj(u)).chunk(3, -1)
        s = torch.exp(-F.softplus(dt) * torch.exp(_acc(self.w)))
        a = 2 * s - 1 if self.neg else s
        return a, b, z

    def forward(self, x):
        a, b, z = self._ab(x)
        if self.backend == "naive":
            from ..kernels.diagonal.naive import diagonal_scan_naive
            h = diagonal_scan_naive(a, b, validate=False)
        else:
            h = affine_scan(a, b)
        return self.out_proj((h * F.silu(z)).to(x.dtype))

    def transitions(self, x):
        a, _, _ = self._ab(x)
        return a[..., None, None]                            # (B, T, D, 1, 1)


class GHMixer(nn.Module):
    """DeltaNet (n_h = 1) / DeltaProduct (n_h > 1) / gated variants on lrnnkit's GH kernels (paper 001)."""

    def __init__(self, width: int, heads: int, head_dim: int, n_h: int = 1, eig_range=(-1.0, 1.0),
                 gate: bool = False, short_conv: bool = True, backend: str = "auto", kernel_dtype: str = "float32"):
        super().__init__()
        self.H, self.K, self.n_h = heads, head_dim, n_h
        self.kernel_dtype = kernel_dtype
        self.beta_scale = 2.0 if parse_eig_range(eig_range)[0] < 0 else 1.0
        self.backend = backend
        HK = heads * head_dim
        self.q_proj = nn.Linear(width, HK, bias=False)
        self.k_proj = nn.Linear(width, n_h * HK, bias=False)
        self.v_proj = nn.Linear(width, n_h * HK, bias=False)
        self.b_proj = nn.Linear(width, n_h * heads, bias=True)
        self.convs = nn.ModuleList([ShortConv(HK), ShortConv(n_h * HK), ShortConv(n_h * HK)]) if short_conv else None
        self.gate = gate
        if gate:
            self.g_proj = nn.Linear(width, heads, bias=True)
            self.A_log = nn.Parameter(torch.zeros(heads))
        self.o_norm = nn.RMSNorm(head_dim)
        self.o_proj = nn.Linear(HK, width, bias=False)

    def _qkvbg(self, x):
        B, T, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.convs is not None:
            q, k, v = self.convs[0](q), self.convs[1](k), self.convs[2](v)
        H, K, nh = self.H, self.K, self.n_h
        q = F.normalize(_acc(q).reshape(B, T, H, K), dim=-1)
        k = F.normalize(_acc(k).reshape(B, T, nh, H, K), dim=-1)
        v = _acc(v).reshape(B, T, nh, H, K)
        beta = self.beta_scale * torch.sigmoid(_acc(self.b_proj(x)).reshape(B, T, nh, H))
        g = None
        if self.gate:
            g = -torch.exp(_acc(self.A_log)) * F.softplus(_acc(self.g_proj(x)))
        return q, k, v, beta, g

    def _backend(self, device) -> str:
        if self.backend != "auto":
            return self.backend
        return "chunk" if device.type == "cuda" else "naive"

    def forward(self, x):
        q, k, v, beta, g = self._qkvbg(x)
        if self.kernel_dtype == "bfloat16" and x.is_cuda:    # fla-like: q, k, v in bf16, fp32 state inside
            q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
        o = gh_apply(q, k, v, beta, g, self._backend(x.device))
        o = self.o_norm(o)
        B, T = x.shape[:2]
        return self.o_proj(o.reshape(B, T, self.H * self.K).to(x.dtype))

    def transitions(self, x):
        _, k, _, beta, g = self._qkvbg(x)
        B, T, nh, H, K = k.shape
        eye = torch.eye(K, dtype=k.dtype, device=x.device)
        A = eye.expand(B, T, H, K, K).clone()
        for j in range(nh):                                  # later factor on the left (docs/conventions.rst)
            kj = k[:, :, j]
            G = eye - beta[:, :, j, :, None, None] * kj[..., :, None] * kj[..., None, :]
            A = G @ A
        if g is not None:
            A = A * torch.exp(g)[..., None, None]
        return A

    def betas(self, x):
        """The betas (B, T, n_h, H) in [0, 2] (001, Fig. 5)."""
        return self._qkvbg(x)[3]

    def keys(self, x):
        """The unit keys (B, T, n_h, H, K) (001, Fig. 5: PCA of the keys)."""
        return self._qkvbg(x)[1]


def gh_apply(q, k, v, beta, g, backend: str):
    """``o`` (B, T, H, K) of the GH-product recurrence on lrnnkit's kernels
    (:func:`lrnnkit.kernels.gh.api.chunk_gh`: gates, Triton backward); ``backend`` "naive" | "chunk" | "torch"."""
    from ..kernels.gh.api import chunk_gh
    o, _ = chunk_gh(q, k, v, beta, g, n_h=k.shape[2], scale=1.0, backend=backend)
    return o


def _pnorm_columns(A: torch.Tensor, p: float) -> torch.Tensor:
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
        self.conv = ShortConv(width) if short_conv else None
        self.A_proj = nn.Linear(width, self.NB * block_size * block_size)
        self.b_proj = nn.Linear(width, width)
        self.out_proj = nn.Linear(width, width)

    def _Ab(self, x):
        u = self.conv(x) if self.conv is not None else x
        B, T, _ = x.shape
        A = _pnorm_columns(_acc(self.A_proj(u)).reshape(B, T, self.NB, self.BS, self.BS), self.p)
        b = _acc(self.b_proj(u)).reshape(B, T, self.NB, self.BS)
        return A, b

    def forward(self, x):
        A, b = self._Ab(x)
        if self.backend == "naive":
            from ..kernels.block_diagonal.naive import block_diagonal_scan_naive
            h = block_diagonal_scan_naive(A, b, validate=False)
        else:
            h = affine_scan(A, b, matrix=True)
        return self.out_proj(h.reshape(x.shape[0], x.shape[1], -1).to(x.dtype))

    def transitions(self, x):
        return self._Ab(x)[0]


class BilinearMixer(nn.Module):
    """004's pure bilinear recurrence ``h_t = W(x_t) h_{t-1}``, ``W(x) = sum_i z_i(x) W_i``, NO additive term
    (004, Section 2: the hidden state is then scale-invariant, so it may be normalised at any step without
    changing its direction); ``h_0`` learned. The scan renormalises every partial product by a positive scalar
    and the readout is ``h / ||h||`` per head, so long inputs neither overflow nor underflow."""

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
        return z, torch.einsum("btr,rhij->bthij", z, _acc(self.W))

    def forward(self, x):
        z, A = self._A(x)
        B, T = x.shape[:2]
        h0 = _acc(self.h0)
        if self.backend == "naive":
            from ..kernels.bilinear.naive import bilinear_scan_naive
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


class SequenceModel(nn.Module):
    """``SequenceModel(vocab, n_out, layer=..., n_h=1, eig_range=(-1, 1), layers=1, width=64, heads=4, ...)``.

    ``forward(tokens (B, T) int64) -> logits (B, T, n_out)``; :attr:`config` (a JSON-able dict) rebuilds the
    model: ``SequenceModel(**config)``. ``layer`` in :data:`LAYER_KINDS`; ``head_dim`` defaults to
    ``width // heads``; ``mlp`` adds an MLP block per layer; ``block_size`` for block-diagonal; ``backend``:
    ``"auto"`` (GH: chunked kernels on CUDA, the sequential reference on CPU; others: the torch scan), ``"naive"``
    (the kernels' sequential references), ``"chunk"`` / ``"torch"`` (GH only), ``"scan"`` (non-GH only).
    ``kernel_dtype="bfloat16"`` feeds the GH kernels bf16 q, k, v on CUDA (as fla does; the state stays fp32).
    """

    def __init__(self, vocab: int, n_out: int, layer: str = "deltaproduct", n_h: int = 1, eig_range=(-1.0, 1.0),
                 layers: int = 1, width: int = 64, heads: int = 4, head_dim: int | None = None, mlp: bool = False,
                 short_conv: bool = True, gate: bool = False, block_size: int = 8, backend: str = "auto",
                 kernel_dtype: str = "float32"):
        super().__init__()
        if layer not in LAYER_KINDS:
            raise InputError(f"unknown layer kind {layer!r} (choose from {', '.join(LAYER_KINDS)})")
        for nm, val in (("vocab", vocab), ("n_out", n_out), ("layers", layers), ("width", width), ("heads", heads),
                        ("n_h", n_h)):
            if isinstance(val, bool) or not isinstance(val, int) or val < 1:
                raise InputError(f"{nm} must be a positive integer, got {val!r}")
        if layer == "deltanet" and n_h != 1:
            raise InputError(f"deltanet has n_h = 1 (got n_h = {n_h}); use layer='deltaproduct'")
        eig = parse_eig_range(eig_range)
        head_dim = head_dim or max(1, width // heads)
        self.config = dict(vocab=vocab, n_out=n_out, layer=layer, n_h=n_h, eig_range=list(eig), layers=layers,
                           width=width, heads=heads, head_dim=head_dim, mlp=mlp, short_conv=short_conv, gate=gate,
                           block_size=block_size, backend=backend, kernel_dtype=kernel_dtype)
        if kernel_dtype not in ("float32", "bfloat16"):
            raise InputError(f"kernel_dtype must be float32 or bfloat16, got {kernel_dtype!r}")
        self.embed = nn.Embedding(vocab, width)
        self.mixers = nn.ModuleList()
        nb = "scan" if backend == "auto" else backend
        for _ in range(layers):
            if layer == "diagonal":
                m = DiagonalMixer(width, eig, short_conv, nb)
            elif layer in ("deltanet", "deltaproduct"):
                m = GHMixer(width, heads, head_dim, n_h, eig, gate, short_conv, backend, kernel_dtype)
            elif layer == "block-diagonal":
                m = BlockDiagonalMixer(width, block_size, backend=nb)
            elif layer == "fixed-point":   # 003: n_h reflections, block_size = the matrix state's rows
                from ..kernels.fixed_point import FixedPointMixer
                m = FixedPointMixer(width, heads, head_dim, n_h, eig, block_size, backend)
            else:
                m = BilinearMixer(width, heads, head_dim, backend=nb)
            self.mixers.append(m)
        self.norms = nn.ModuleList([nn.RMSNorm(width) for _ in range(layers)])
        self.mlps = nn.ModuleList([MLP(width) for _ in range(layers)]) if mlp else None
        self.mlp_norms = nn.ModuleList([nn.RMSNorm(width) for _ in range(layers)]) if mlp else None
        self.final_norm = nn.RMSNorm(width)
        self.head = nn.Linear(width, n_out)

    def _run(self, tokens, collect: str | None = None):
        if tokens.dtype != torch.long:
            tokens = tokens.long()
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.config["vocab"]):
            raise InputError(f"token ids must lie in 0..{self.config['vocab'] - 1}")
        x = self.embed(tokens)
        got = []
        for i, m in enumerate(self.mixers):
            u = self.norms[i](x)
            if collect is not None:
                got.append(getattr(m, collect)(u))
            x = x + m(u)
            if self.mlps is not None:
                x = x + self.mlps[i](self.mlp_norms[i](x))
        return x, got

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x, _ = self._run(tokens)
        return self.head(self.final_norm(x))

    @torch.no_grad()
    def transition_matrices(self, tokens: torch.Tensor) -> list:
        """Per layer, the transition matrix of every token, (B, T, H, n, n) (module docstring). Layer ``l``'s
        transitions depend on the outputs of the layers below, so they are taken in a forward pass."""
        return self._run(tokens, "transitions")[1]

    @torch.no_grad()
    def betas(self, tokens: torch.Tensor) -> list:
        """Per GH layer, the betas (B, T, n_h, H) in [0, 2] (001, Fig. 5)."""
        if self.config["layer"] not in ("deltanet", "deltaproduct"):
            raise InputError(f"betas exist for deltanet/deltaproduct layers, not {self.config['layer']!r}")
        return self._run(tokens, "betas")[1]

    @torch.no_grad()
    def keys(self, tokens: torch.Tensor) -> list:
        """Per GH layer, the unit keys (B, T, n_h, H, K) (001, Fig. 5)."""
        if self.config["layer"] not in ("deltanet", "deltaproduct"):
            raise InputError(f"keys exist for deltanet/deltaproduct layers, not {self.config['layer']!r}")
        return self._run(tokens, "keys")[1]
