"""``DeltaProductLayer``: the trainable DeltaNet (``num_householder = 1``) / DeltaProduct (``num_householder > 1``)
token mixer, a drop-in for flash-linear-attention's ``GatedDeltaProduct`` (paper 001; paper 000 for the
eigenvalue range): the same constructor keywords, the same ``forward`` contract and return value, and the same
``state_dict`` keys and shapes, so ``ours.load_state_dict(fla_layer.state_dict())`` and the reverse work.

For input x (B, T, hidden_size), with H = num_heads key heads of width K = head_dim, H_v = num_v_heads value heads
of width V = K * expand_v, and n = num_householder, per value head h::

    q_t = silu(conv(W_q x))_t,  k_{t,j} = silu(conv(W_k x))_{t,j},  v_{t,j} = silu(conv(W_v x))_{t,j}  (j = 1..n)
    q, k <- q / sqrt(||q||^2 + 1e-6), k / sqrt(||k||^2 + 1e-6)     (fla's l2norm: unit vectors up to the eps, so
                                                    every factor is a generalized Householder matrix I - beta k k^T
                                                    with ||k|| <= 1, eigenvalue 1 - beta ||k||^2 in [-1, 1])
    beta_{t,j} = 2 sigmoid(w_b . x_t)  if allow_neg_eigval (eigenvalue 1 - beta in [-1, 1])  else  sigmoid(w_b . x_t)
    g_t = -exp(A_log) softplus(w_a . x_t + dt_bias)                          (use_forget_gate; a log-decay <= 0)
    S <- exp(g_t) S;   S <- (I - beta_{t,j} k_{t,j} k_{t,j}^T) S + beta_{t,j} k_{t,j} v_{t,j}^T      (j = 1..n)
    o_t = S^T q_t / sqrt(K)
    o_t <- RMSNorm(o_t) * silu(W_g x_t)  (use_output_gate)   or   RMSNorm(o_t)
    y = W_o [o^(1); ...; o^(H_v)]

so each token's state transition ``exp(g_t) G_n ... G_1`` has its eigenvalues in [-1, 1] (allow_neg_eigval:
paper 000, Theorem 1 needs the negative ones for parity, Theorem 2 the complex ones of a product for modular
counting) or in [0, 1]. When H_v > H, each key head serves H_v / H value heads (fla's grouped value heads).

What lrnnkit adds (extensions, all optional): ``mode`` also takes ``"torch"`` (the chunk equations in torch, any
device) and ``"naive"`` (the sequential loop, the oracle of the tests); on CPU tensors "chunk" runs "torch" (the
Triton interpreter is far too slow to train with); float32 and float64 layers keep beta and the gate in their own
precision; ``fp32_precision`` and ``keep_states`` tune the float32 chunk kernels (:func:`lrnnkit.ops.gh.api.chunk_gh`);
``transitions``, ``betas`` and ``keys`` expose the per-token transition matrices (001, Fig. 5).

Incremental decoding, fla's contract: ``forward(x, attention_mask, past_key_values=cache, use_cache=True)`` reads
this layer's entry ``cache[layer_idx]`` (if stored), runs the tokens from that state -- S and the three short
convolution windows -- and stores the final ones back with ``cache.update(recurrent_state=S (N, H_v, K, V),
conv_state=(q, k, v) windows (N, C, W) or None, layer_idx=layer_idx, offset=T)``, exactly the entries and layouts
of fla's ``GatedDeltaProduct`` (N = the batch rows; a padding mask leaves empty rows empty sequences). A prompt
runs the chunked kernels with the initial state in and the final state out; one token per sequence (a decode step)
runs the fused recurrent Triton kernel on CUDA (one launch for the batch, with q and k normalized, beta's
sigmoid and the gate computed inside it, as fla's decode kernel does) and rolls each convolution window by one. Since S_T after a prompt is the state the full forward reaches at T, prefill + steps compute the full
forward's outputs (up to rounding). The cache is fla's ``Cache`` or :class:`lrnnkit.layers.decode_cache.RecurrentCache`.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import InputError
from ..limits import check_int
from ..ops.l2norm import l2norm
from .decode_cache import layer_state
from .layer_io import check_dtype, pack
from .norm import GatedRMSNorm, RMSNorm
from .short_conv import ShortConvolution

MODES = ("chunk", "fused_recurrent", "torch", "naive")


class DeltaProductLayer(torch.nn.Module):
    """``o, _, cache = DeltaProductLayer(hidden_size=2048, expand_v=2, head_dim=256, num_heads=6, num_v_heads=None,
    mode="chunk", use_output_gate=True, use_short_conv=True, conv_size=4, conv_bias=False, layer_idx=None,
    norm_eps=1e-5, use_forget_gate=True, allow_neg_eigval=True, num_householder=2)(hidden_states,
    attention_mask=None, cu_seqlens=None)``: fla's ``GatedDeltaProduct`` signature and defaults; see the module
    text. ``hidden_states`` (B, T, hidden_size); ``attention_mask`` (B, T) of 0/1 marks padding (1 = keep);
    ``cu_seqlens`` packs several sequences into B = 1. Returns ``(o, None, past_key_values)`` with o like x."""

    def __init__(self, hidden_size: int = 2048, expand_v: float = 2, head_dim: int = 256, num_heads: int = 6,
                 num_v_heads: int | None = None, mode: str = "chunk", use_output_gate: bool = True,
                 use_short_conv: bool = True, conv_size: int = 4, conv_bias: bool = False, layer_idx: int | None = None,
                 norm_eps: float = 1e-5, use_forget_gate: bool = True, allow_neg_eigval: bool = True,
                 num_householder: int = 2, *, fp32_precision: str | None = None, keep_states: bool | None = None,
                 **kwargs):
        super().__init__()
        where = "DeltaProductLayer"
        if kwargs:
            raise InputError(f"{where}: unknown keyword {sorted(kwargs)[0]!r} (fla's GatedDeltaProduct keywords, "
                             "plus fp32_precision and keep_states)")
        for name, val in (("hidden_size", hidden_size), ("head_dim", head_dim), ("num_heads", num_heads),
                          ("num_householder", num_householder), ("conv_size", conv_size)):
            check_int(f"{where}: {name}", val, 1)
        num_v_heads = num_heads if num_v_heads is None else check_int(f"{where}: num_v_heads", num_v_heads, 1)
        if num_v_heads % num_heads:
            raise InputError(f"{where}: num_v_heads={num_v_heads} must be a multiple of num_heads={num_heads}")
        if isinstance(expand_v, bool) or not isinstance(expand_v, (int, float)) or expand_v <= 0 \
                or not math.isclose(head_dim * expand_v, round(head_dim * expand_v), rel_tol=1e-5):
            raise InputError(f"{where}: expand_v={expand_v!r} must make head_dim * expand_v a positive integer "
                             f"(head_dim={head_dim})")
        if mode not in MODES:
            raise InputError(f"{where}: unknown mode {mode!r} (choose from {', '.join(MODES)})")
        if not isinstance(norm_eps, (int, float)) or isinstance(norm_eps, bool) or not norm_eps > 0:
            raise InputError(f"{where}: norm_eps must be a positive number, got {norm_eps!r}")
        from ..ops.gh.api import check_keep_states
        check_keep_states(where, keep_states)
        if fp32_precision is not None:   # refused at construction, not at the first float32 forward
            from ..ops.gh.wy import fp32_mode
            fp32_mode(fp32_precision)
        self.mode, self.hidden_size, self.expand_v = mode, hidden_size, expand_v
        self.use_forget_gate, self.allow_neg_eigval = bool(use_forget_gate), bool(allow_neg_eigval)
        self.num_householder, self.use_output_gate = num_householder, bool(use_output_gate)
        self.use_short_conv, self.conv_size, self.conv_bias = bool(use_short_conv), conv_size, bool(conv_bias)
        self.head_dim, self.num_heads, self.num_v_heads = head_dim, num_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_dim, int(round(head_dim * expand_v))
        self.key_dim, self.value_dim = num_heads * head_dim, num_v_heads * self.head_v_dim
        self.layer_idx, self.norm_eps = layer_idx, norm_eps
        self.fp32_precision, self.keep_states = fp32_precision, keep_states
        n = num_householder

        self.q_proj = torch.nn.Linear(hidden_size, self.key_dim, bias=False)
        self.k_proj = torch.nn.Linear(hidden_size, self.key_dim * n, bias=False)
        self.v_proj = torch.nn.Linear(hidden_size, self.value_dim * n, bias=False)
        self.b_proj = torch.nn.Linear(hidden_size, num_v_heads * n, bias=False)
        if self.use_forget_gate:      # Mamba-2 / Gated DeltaNet parametrisation, fla's initialisation
            self.a_proj = torch.nn.Linear(hidden_size, num_v_heads, bias=False)
            self.A_log = torch.nn.Parameter(torch.log(torch.empty(num_v_heads).uniform_(0, 16)))
            self.A_log._no_weight_decay = True
            dt = torch.exp(torch.rand(num_v_heads) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
            dt = torch.clamp(dt, min=1e-4)
            self.dt_bias = torch.nn.Parameter(dt + torch.log(-torch.expm1(-dt)))   # softplus^{-1}(dt)
            self.dt_bias._no_weight_decay = True
        if self.use_short_conv:
            self.q_conv1d = ShortConvolution(self.key_dim, conv_size, bias=conv_bias)
            self.k_conv1d = ShortConvolution(self.key_dim * n, conv_size, bias=conv_bias)
            self.v_conv1d = ShortConvolution(self.value_dim * n, conv_size, bias=conv_bias)
        if self.use_output_gate:
            self.g_proj = torch.nn.Linear(hidden_size, self.value_dim, bias=False)
            self.o_norm = GatedRMSNorm(self.head_v_dim, eps=norm_eps)
        else:
            self.o_norm = RMSNorm(self.head_v_dim, eps=norm_eps)
        self.o_proj = torch.nn.Linear(self.value_dim, hidden_size, bias=False)

    def extra_repr(self) -> str:
        return (f"hidden_size={self.hidden_size}, num_heads={self.num_heads}, num_v_heads={self.num_v_heads}, "
                f"head_dim={self.head_dim}, expand_v={self.expand_v}, num_householder={self.num_householder}, "
                f"allow_neg_eigval={self.allow_neg_eigval}, use_forget_gate={self.use_forget_gate}, "
                f"use_output_gate={self.use_output_gate}, use_short_conv={self.use_short_conv}, mode={self.mode!r}")

    # ------------------------------------------------------------------------------------------ the pieces
    def gh_inputs(self, x: torch.Tensor, cu_seqlens=None):
        """The recurrence's inputs in lrnnkit's canonical per-token layout: q (B, T, H_v, K), k (B, T, n, H_v, K),
        v (B, T, n, H_v, V), beta (B, T, n, H_v) in [0, 2], g (B, T, H_v) <= 0 or None; q and k of norm <= 1
        (unit up to fla's l2norm eps).
        beta and g are float32 (float64 for a float64 layer), q, k, v in the projections' dtype."""
        return self._inputs(x, cu_seqlens)[:5]

    def _inputs(self, x: torch.Tensor, cu_seqlens=None, conv_state=None, want_state: bool = False,
                one_token: bool = False, raw: bool = False):
        """:meth:`gh_inputs` and the short convolutions' final states (a tuple, or None), starting from
        ``conv_state`` (fla's (q, k, v) tuple of (N, C, W) windows) if given. ``raw``: q and k not yet normalized,
        beta and g their pre-activations (sigmoid, gate formula, l2norm left to the fused kernel: :meth:`_mix`)."""
        B, T, _ = x.shape
        H, Hv, K, V, n = self.num_heads, self.num_v_heads, self.head_k_dim, self.head_v_dim, self.num_householder
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        states = None
        if self.use_short_conv:
            if conv_state is None and not want_state:
                q, k, v = self.q_conv1d(q, cu_seqlens), self.k_conv1d(k, cu_seqlens), self.v_conv1d(v, cu_seqlens)
            else:
                cq, ck, cv = (None, None, None) if conv_state is None else conv_state
                q, cq = self.q_conv1d.forward_cached(q, cq, want_state, cu_seqlens, one_token)
                k, ck = self.k_conv1d.forward_cached(k, ck, want_state, cu_seqlens, one_token)
                v, cv = self.v_conv1d.forward_cached(v, cv, want_state, cu_seqlens, one_token)
                states = (cq, ck, cv) if want_state else None
        else:
            q, k, v = F.silu(q), F.silu(k), F.silu(v)
        q, k = q.reshape(B, T, H, K), k.reshape(B, T, n, H, K)
        if not raw:
            q, k = l2norm(q), l2norm(k)
        v = v.reshape(B, T, n, Hv, V)
        if Hv > H:
            q, k = q.repeat_interleave(Hv // H, dim=-2), k.repeat_interleave(Hv // H, dim=-2)
        b = self.b_proj(x)
        beta = (b if b.dtype == torch.float64 else b.float()).reshape(B, T, n, Hv)
        if not raw:
            beta = torch.sigmoid(beta)
            if self.allow_neg_eigval:
                beta = 2 * beta
        g = None
        if self.use_forget_gate:
            a = self.a_proj(x)
            g = a if a.dtype == torch.float64 else a.float()
            if not raw:
                g = -self.A_log.to(g.dtype).exp() * F.softplus(g + self.dt_bias.to(g.dtype))
        return q, k, v, beta, g, states

    def _mode(self, x: torch.Tensor) -> str:
        mode = self.mode
        if mode in ("chunk", "fused_recurrent"):
            if x.device.type != "cuda":
                return "torch"
            if torch.is_grad_enabled():
                return "chunk"
            if x.shape[1] <= 64 and not self.training:   # fla's rule: short inference inputs run recurrently
                return "fused_recurrent"
        return mode

    # ------------------------------------------------------------------------------------------ forward
    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                past_key_values=None, use_cache: bool | None = False, output_attentions: bool | None = False,
                **kwargs):
        where = "DeltaProductLayer"
        last = layer_state(where, self.layer_idx, past_key_values)
        x, cu_seqlens, put_back = pack(where, hidden_states, self.hidden_size, attention_mask, past_key_values,
                                       use_cache, kwargs, decoding=True)
        check_dtype(where, x, self)
        o, state, conv = self._mix(x, cu_seqlens, last, bool(use_cache))
        if past_key_values is not None:       # fla's update_layer_cache: None entries keep what is stored
            past_key_values.update(recurrent_state=state, conv_state=conv, layer_idx=self.layer_idx,
                                   offset=hidden_states.shape[1])
        return put_back(o), None, past_key_values

    def _mix(self, x: torch.Tensor, cu_seqlens, last: dict | None = None, use_cache: bool = False):
        """(output (B, T, hidden), final recurrent state or None, final conv states or None), from the cached
        ``last`` entry if given."""
        B, T, _ = x.shape
        N = B if cu_seqlens is None else len(cu_seqlens) - 1
        h0 = None if last is None else last.get("recurrent_state")
        conv0 = None if last is None else last.get("conv_state")
        one_token = conv0 is not None and ((cu_seqlens is None and T == 1) or
                                           (cu_seqlens is not None and T == N and bool((cu_seqlens.diff() == 1).all())))
        mode = self._mode(x)
        fused = mode == "fused_recurrent"        # l2norm, sigmoid and gate inside the kernel: fewer launches
        q, k, v, beta, g, conv = self._inputs(x, cu_seqlens, conv0, use_cache, one_token, raw=fused)
        if fused:
            from ..ops.gh.fused_recurrent import fused_recurrent_delta_product
            raw = {"qk_l2norm": True, "beta_sigmoid": 2.0 if self.allow_neg_eigval else 1.0}
            if self.use_forget_gate:
                raw.update(A_log=self.A_log, dt_bias=self.dt_bias)
            o, state = fused_recurrent_delta_product(q, k, v, beta, g, scale=self.head_k_dim ** -0.5,
                                                     initial_state=h0, output_final_state=use_cache,
                                                     validate=False, cu_seqlens=cu_seqlens, n_seq=N, raw=raw)
        else:
            from ..ops.gh.api import chunk_gh
            o, state = chunk_gh(q, k, v, g, beta, self.num_householder, initial_state=h0,
                                output_final_state=use_cache, cu_seqlens=cu_seqlens, backend=mode,
                                fp32_precision=self.fp32_precision, keep_states=self.keep_states, validate=False)
        if self.use_output_gate:
            z = self.g_proj(x).reshape(B, T, self.num_v_heads, self.head_v_dim)
            o = self.o_norm(o, z)
        else:
            o = self.o_norm(o)
        return self.o_proj(o.reshape(B, T, self.value_dim)), state, conv

    # ------------------------------------------------------------------------------------------ analysis
    @torch.no_grad()
    def transitions(self, x: torch.Tensor) -> torch.Tensor:
        """Per token and value head the state-transition matrix ``exp(g_t) G_n ... G_1`` (B, T, H_v, K, K), later
        factors on the left (docs/conventions.rst)."""
        _, k, _, beta, g = self.gh_inputs(x)
        k = k.to(beta.dtype)
        B, T, n, H, K = k.shape
        eye = torch.eye(K, dtype=k.dtype, device=x.device)
        A = eye.expand(B, T, H, K, K).clone()
        for j in range(n):
            kj = k[:, :, j]
            A = (eye - beta[:, :, j, :, None, None] * kj[..., :, None] * kj[..., None, :]) @ A
        if g is not None:
            A = A * torch.exp(g)[..., None, None]
        return A

    @torch.no_grad()
    def betas(self, x: torch.Tensor) -> torch.Tensor:
        """The betas (B, T, n, H_v) in [0, 2] (001, Fig. 5)."""
        return self.gh_inputs(x)[3]

    @torch.no_grad()
    def keys(self, x: torch.Tensor) -> torch.Tensor:
        """The unit keys (B, T, n, H_v, K) (001, Fig. 5: PCA of the keys)."""
        return self.gh_inputs(x)[1]
