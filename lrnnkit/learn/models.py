"""Trainable sequence models whose recurrent layers are LRNNs (paper 000, eq. 1: ``H_t = A(x_t) H_{t-1} + B(x_t)``).

:class:`SequenceModel` = embedding -> ``layers`` x [pre-norm LRNN mixer + residual (+ pre-norm MLP + residual)] ->
final norm -> linear head. The mixer (``layer=``) is one of

* ``"diagonal"``: Mamba-style ``A(x) = Diag(s(x))`` with ``s = exp(-softplus(dt(x)) exp(w))`` in (0, 1), or
  ``Diag(2 s(x) - 1)`` in (-1, 1) (000, Table 2); ``B(x) = W_b x``; output ``W_o (h * silu(W_z x))``.
* ``"deltanet"`` / ``"deltaproduct"`` (001): the public layer :class:`lrnnkit.layers.DeltaProductLayer` (fla's
  ``GatedDeltaProduct``, expand_v = 1): per head ``A(x) = G_{n_h} ... G_1`` with ``G_j = I - beta_j k_j k_j^T``,
  unit keys, ``beta = sigmoid`` ([0, 1]) or ``2 sigmoid`` ([-1, 1]); ``B(x) = sum_j beta_j k_j v_j^T`` (threaded
  through the factors); output ``RMSNorm(S^T q / sqrt(K)) * silu(W_g x)`` per head (``output_gate=False`` drops
  the gate). DeltaNet is ``n_h = 1``. ``gate=True`` multiplies the state by ``exp(g_t)``,
  ``g = -exp(A_log) softplus(W_a x + dt_bias)`` first (fla's forget gate). On CUDA the chunked Triton kernels, on
  CPU the same chunk equations in torch.
* ``"mamba"``: Mamba's selective block (Gu & Dao, 2023; :class:`lrnnkit.layers.mamba.MambaMixer`): width expanded
  2x, a 16-state diagonal recurrence per channel with ``a = exp(-Delta exp(A_log))`` or ``2 a - 1`` (000's
  extension), read out by ``C_t`` with the ``D`` skip and the SiLU gate; the model 000 and 003 train, where
  ``"diagonal"`` is its one-state simplification. Its own convolution (``short_conv`` does not apply).
* ``"block-diagonal"`` (002, eq. 5-6): ``A(x) = diag(A^(1), ..., A^(h))`` with blocks of size ``b`` whose columns
  are ``v / max(1, ||v||_p)`` (``p = 1.2`` as in 002, Section 4.4), ``B(x) = W_b x``.
* ``"bilinear"`` (004: ``h_t = W(x_t) h_{t-1}`` with ``W(x) = sum_i z_i(x) W_i`` linear in the input and no
  additive term): per head a ``d x d`` matrix; the readout is the direction ``h / ||h||`` (004's scale
  invariance). Unconstrained spectrum (``eig_range`` does not apply).

The diagonal and block-diagonal mixers' scans run forward and backward on Triton kernels on CUDA (the backward is the
same recurrence in reverse: :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan`,
:func:`lrnnkit.ops.block_diagonal.differentiable.block_diagonal_scan`), a log-depth doubling scan in torch
elsewhere; the bilinear mixer runs a renormalised log-depth (Hillis-Steele) scan in torch, differentiable;
``backend="naive"`` runs lrnnkit's sequential kernel references instead (:mod:`lrnnkit.ops.diagonal.naive`, ...),
which the tests use as the oracle for values and gradients.

The mixers and the MLP block are layers (:mod:`lrnnkit.layers.mixers`, chosen from its table ``MIXERS``); this
module assembles the network.

:meth:`SequenceModel.transition_matrices` returns, per layer, the per-token transition matrices ``A(x_t)`` as a
tensor (B, T, H, n, n): H heads of n x n (diagonal: D heads of 1 x 1; block-diagonal: h blocks of b x b).
"""
from __future__ import annotations

import torch
from torch import nn

from ..errors import InputError
from ..layers.mixers import MLP, affine_scan, build_mixer, gh_layer, parse_eig_range
from ..layers.norm import ScaleSafeRMSNorm

__all__ = ["SequenceModel", "LAYER_KINDS", "affine_scan", "parse_eig_range", "gh_layer"]

from .kinds import LAYER_KINDS  # noqa: E402  (torch-free, for the CLI)


class SequenceModel(nn.Module):
    """``SequenceModel(vocab, n_out, layer=..., n_h=1, eig_range=(-1, 1), layers=1, width=64, heads=4, ...)``.

    ``forward(tokens (B, T) int64) -> logits (B, T, n_out)``; :attr:`config` (a JSON-able dict) rebuilds the
    model: ``SequenceModel(**config)``. ``layer`` in :data:`LAYER_KINDS`; ``head_dim`` defaults to
    ``width // heads``; ``mlp`` adds an MLP block per layer; ``block_size`` for block-diagonal; ``backend``:
    ``"auto"`` (GH: chunked kernels on CUDA, the chunk equations in torch on CPU; others: the scans of the module
    text),
    ``"naive"`` (the kernels' sequential references), ``"chunk"`` / ``"torch"`` (GH only), ``"scan"`` (non-GH
    only). ``output_gate`` (GH only): fla's output gate ``RMSNorm(o) * silu(W_g x)`` (on by default, as in fla).
    """

    check_tokens = True   # token ids range-checked on the host in forward; the device loop's sampler needs none

    def __init__(self, vocab: int, n_out: int, layer: str = "deltaproduct", n_h: int = 1, eig_range=(-1.0, 1.0),
                 layers: int = 1, width: int = 64, heads: int = 4, head_dim: int | None = None, mlp: bool = False,
                 short_conv: bool = True, gate: bool = False, block_size: int = 8, backend: str = "auto",
                 output_gate: bool = True, fp_train_iters: int | None = None, fp_iteration: str | None = None):
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
                           block_size=block_size, backend=backend, output_gate=bool(output_gate))
        if fp_train_iters is not None:      # the fixed-point layer's training cap, when not its default
            if layer != "fixed-point":
                raise InputError(f"fp_train_iters applies to the fixed-point layer only, not {layer!r}")
            self.config["fp_train_iters"] = fp_train_iters
        if fp_iteration is not None:        # the fixed-point layer's stopping rule, when not its default ("paper")
            if layer != "fixed-point":
                raise InputError(f"fp_iteration applies to the fixed-point layer only, not {layer!r}")
            self.config["fp_iteration"] = fp_iteration     # its value: checked by the layer (iteration_rule)
        self.embed = nn.Embedding(vocab, width)
        self.mixers = nn.ModuleList()
        for _ in range(layers):
            self.mixers.append(build_mixer(layer, width=width, heads=heads, head_dim=head_dim, n_h=n_h, eig=eig,
                                           gate=gate, short_conv=short_conv, output_gate=output_gate,
                                           block_size=block_size, backend=backend, fp_train_iters=fp_train_iters,
                                           fp_iteration=fp_iteration))
        self.norms = nn.ModuleList([ScaleSafeRMSNorm(width) for _ in range(layers)])
        self.mlps = nn.ModuleList([MLP(width) for _ in range(layers)]) if mlp else None
        self.mlp_norms = nn.ModuleList([ScaleSafeRMSNorm(width) for _ in range(layers)]) if mlp else None
        self.final_norm = ScaleSafeRMSNorm(width)
        self.head = nn.Linear(width, n_out)

    def _run(self, tokens, collect: str | None = None):
        if tokens.dtype != torch.long:
            tokens = tokens.long()
        if self.check_tokens and tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.config["vocab"]):
            raise InputError(f"token ids must lie in 0..{self.config['vocab'] - 1}")
        x = self.embed(tokens)
        got = []
        for i, m in enumerate(self.mixers):
            u = self.norms[i](x)
            if collect is not None:
                got.append(getattr(m, collect)(u))
            y = m(u)
            x = x + (y[0] if isinstance(y, tuple) else y)   # DeltaProductLayer returns fla's (o, None, cache)
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
