"""``ShortConvolution``: fla's causal depthwise convolution layer (a ``torch.nn.Conv1d``), on the functions of
:mod:`lrnnkit.ops.short_conv` (the equations, the torch reference and the Triton passes are stated there)."""
from __future__ import annotations

import torch

from ..errors import InputError
from ..ops.short_conv import (BACKENDS, causal_conv_cached, causal_conv_torch, causal_conv_triton, conv_final_state,
                              conv_step, conv_step_triton)

__all__ = ["ShortConvolution"]


class ShortConvolution(torch.nn.Conv1d):
    """``y = ShortConvolution(hidden_size, kernel_size=4, bias=False, activation="silu", backend="auto")(x,
    cu_seqlens=None)``; x and y (B, T, hidden_size). ``backend``: "auto" (Triton on CUDA tensors, the torch
    reference elsewhere), "triton", "torch". See the module text."""

    def __init__(self, hidden_size: int, kernel_size: int = 4, bias: bool = False, activation: str | None = "silu",
                 backend: str = "auto"):
        if activation not in (None, "silu", "swish"):
            raise InputError(f"ShortConvolution: activation must be 'silu', 'swish' or None, got {activation!r}")
        if isinstance(kernel_size, bool) or not isinstance(kernel_size, int) or kernel_size < 1:
            raise InputError(f"ShortConvolution: kernel_size must be a positive integer, got {kernel_size!r}")
        if backend not in BACKENDS:
            raise InputError(f"ShortConvolution: unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
        super().__init__(hidden_size, hidden_size, kernel_size, groups=hidden_size, bias=bias)
        self.hidden_size, self.activation, self.backend = hidden_size, activation, backend

    def extra_repr(self) -> str:
        return f"{self.hidden_size}, kernel_size={self.kernel_size[0]}, activation={self.activation}"

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        if self.backend == "triton" or (self.backend == "auto" and x.is_cuda and x.dtype != torch.float64):
            return causal_conv_triton(x, self.weight, self.bias, self.activation, cu_seqlens)
        return causal_conv_torch(x, self.weight, self.bias, self.activation, cu_seqlens)

    def forward_cached(self, x: torch.Tensor, cache: torch.Tensor | None = None, output_final_state: bool = False,
                       cu_seqlens: torch.Tensor | None = None, one_token: bool = False):
        """fla's ``ShortConvolution.forward(x, cache=..., output_final_state=..., cu_seqlens=...)``: returns ``(y,
        final_state or None)``, the state (N, C, W) in x's dtype as fla keeps it (module text). ``one_token``: the
        caller knows every sequence has exactly one token (a decode step), so the cache is rolled by one."""
        W = self.kernel_size[0]
        if cache is not None and one_token:
            shape = x.shape
            fast = x.is_cuda and x.dtype != torch.float64 and self.backend != "torch" and not (
                torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad))
            y, state = (conv_step_triton if fast or self.backend == "triton" else conv_step)(
                x.reshape(-1, shape[-1]), self.weight, self.bias, self.activation, cache)
            return y.reshape(shape), (state if output_final_state else None)
        y = x.clone() if x.shape[1] == 0 else self.forward(x, cu_seqlens) if cache is None else \
            causal_conv_cached(x, self.weight, self.bias, self.activation, cu_seqlens, cache)
        return y, (conv_final_state(x, W, cu_seqlens, cache) if output_final_state else None)
