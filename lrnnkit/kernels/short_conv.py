"""``ShortConvolution``: the causal depthwise convolution in front of the q / k / v streams of DeltaNet-style layers
(fla's ``ShortConvolution``, same parameter names and shapes, so state dicts move between the two).

For channels c and a window of ``kernel_size = W`` taps, with x taken as 0 before the start of each sequence::

    y_{t,c} = act( b_c + sum_{s=0}^{W-1} w_{c, W-1-s} x_{t-s, c} )       act = SiLU (or identity)

``weight`` has shape (C, 1, W) as an ``nn.Conv1d(C, C, W, groups=C)``; the last tap multiplies the current token.
Packed sequences (``cu_seqlens``, B = 1) are reset at every boundary: no tap reads across one.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import InputError


class ShortConvolution(torch.nn.Conv1d):
    """``y = ShortConvolution(hidden_size, kernel_size=4, bias=False, activation="silu")(x, cu_seqlens=None)``;
    x and y (B, T, hidden_size). See the module text."""

    def __init__(self, hidden_size: int, kernel_size: int = 4, bias: bool = False, activation: str | None = "silu"):
        if activation not in (None, "silu", "swish"):
            raise InputError(f"ShortConvolution: activation must be 'silu', 'swish' or None, got {activation!r}")
        if isinstance(kernel_size, bool) or not isinstance(kernel_size, int) or kernel_size < 1:
            raise InputError(f"ShortConvolution: kernel_size must be a positive integer, got {kernel_size!r}")
        super().__init__(hidden_size, hidden_size, kernel_size, groups=hidden_size, bias=bias)
        self.hidden_size, self.activation = hidden_size, activation

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, kernel_size={self.kernel_size[0]}, activation={self.activation}"

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        B, T, C = x.shape
        W = self.kernel_size[0]
        w = self.weight.to(x.dtype)
        if cu_seqlens is None or len(cu_seqlens) <= 2:
            y = F.conv1d(F.pad(x.transpose(1, 2), (W - 1, 0)), w, None, groups=C).transpose(1, 2)
        else:
            pos = torch.arange(T, device=x.device)
            cu = cu_seqlens.to(x.device)
            seq = torch.searchsorted(cu[1:], pos, right=True)
            local = pos - cu[:-1][seq]                                  # index inside its own sequence
            y = 0
            for s in range(W):                                          # tap s reads x_{t-s}
                shifted = F.pad(x, (0, 0, s, 0))[:, :T] if s else x
                y = y + shifted * (local >= s).to(x.dtype)[None, :, None] * w[:, 0, W - 1 - s]
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return F.silu(y) if self.activation else y
