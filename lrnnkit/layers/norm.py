"""``RMSNorm`` and ``GatedRMSNorm``: fla's norm layers (weight in float32), on :func:`lrnnkit.ops.norm.rms_norm`
(the equations and both implementations are stated there)."""
from __future__ import annotations

import torch

from ..ops.norm import rescale_large, rms_norm

__all__ = ["RMSNorm", "GatedRMSNorm", "ScaleSafeRMSNorm"]


class RMSNorm(torch.nn.Module):
    """``RMSNorm(hidden_size, eps=1e-5)(x)``: see the module text (weight kept in float32, as fla's). ``backend``
    (an attribute, not part of the state dict): as :func:`rms_norm`'s."""

    def __init__(self, hidden_size: int, eps: float = 1e-5, backend: str = "auto"):
        super().__init__()
        self.hidden_size, self.eps, self.backend = hidden_size, eps, backend
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps, backend=self.backend)


class GatedRMSNorm(RMSNorm):
    """``GatedRMSNorm(hidden_size, eps=1e-5)(x, z)``: RMSNorm of x times silu(z) (fla's FusedRMSNormGated with
    its default swish gate)."""

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return rms_norm(x, self.weight, self.eps, z, backend=self.backend)


class ScaleSafeRMSNorm(torch.nn.RMSNorm):
    """``torch.nn.RMSNorm(width)`` (eps: the dtype's machine epsilon; same parameter, same state dict) that stays
    right for vectors too large for float32's squares: :func:`lrnnkit.ops.norm.rescale_large` first, which changes
    nothing below 2^56 and divides larger vectors by a power of two. The residual stream's norms of
    :class:`lrnnkit.learn.models.SequenceModel`: where a layer's state grows over a long input (002's p = 1.2
    blocks, spectral radius up to 8^(1/6) per step), a plain RMSNorm returns 0 once ``mean(x^2)`` overflows, and the
    model answers one class for every word."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(rescale_large(x))

