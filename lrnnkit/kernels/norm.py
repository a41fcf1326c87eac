"""The per-head output normalisations of DeltaNet-style layers (fla's ``RMSNorm`` and ``FusedRMSNormGated``, same
parameter names, so state dicts move between the two). Computed in float32 (float64 stays float64)::

    RMSNorm(o)          = o / sqrt(mean(o^2) + eps) * w
    GatedRMSNorm(o, z)  = o / sqrt(mean(o^2) + eps) * w * silu(z)         (the output gate, silu(z) = z sigmoid(z))

over the last axis; the result has o's dtype. The gate is what lets a layer switch its read-out off token by
token: without it, the normalised state read-out of a DeltaProduct layer could not learn the S3 word problem in
benchmarks/bench_layer_vs_fla.py (docs/learning.rst, "Why the output gate matters").
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def _acc(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float64 else x.float()


def rms_norm(x: torch.Tensor, weight: torch.Tensor | None, eps: float, gate: torch.Tensor | None = None):
    """``x / sqrt(mean(x^2) + eps) * weight (* silu(gate))`` along the last axis in float32; x's dtype out. Plain
    torch: on the H100 the forward + backward of the whole layer ran faster this way than with the chain compiled by
    torch.compile (benchmarks/RESULTS.md, "DeltaProduct layer against fla"), and nothing waits for a compiler."""
    xf = _acc(x)
    y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
    if weight is not None:
        y = y * weight.to(y.dtype)
    if gate is not None:
        y = y * F.silu(gate.to(y.dtype))
    return y.to(x.dtype)


class RMSNorm(torch.nn.Module):
    """``RMSNorm(hidden_size, eps=1e-5)(x)``: see the module text (weight kept in float32, as fla's)."""

    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.hidden_size, self.eps = hidden_size, eps
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


class GatedRMSNorm(RMSNorm):
    """``GatedRMSNorm(hidden_size, eps=1e-5)(x, z)``: RMSNorm of x times silu(z) (fla's FusedRMSNormGated with
    its default swish gate)."""

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return rms_norm(x, self.weight, self.eps, z)
