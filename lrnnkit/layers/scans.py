"""torch.nn.Module front-ends of the layer kernels, choosing the implementation by ``mode``.

Each module is stateless (no learned weights: projections belong to the model that uses the layer) and computes
exactly what its ``naive`` reference defines; ``mode`` picks the kernel:

* :class:`DiagonalLayer`: ``"chunk"`` (associative scan), ``"fused_recurrent"``, ``"naive"``.
* :class:`BlockDiagonalLayer`, :class:`BilinearLayer`: ``"fused_recurrent"``, ``"naive"``.

Triton modes need CUDA tensors, or CPU tensors with TRITON_INTERPRET=1. The GH family (DeltaNet / DeltaProduct)
has its functional entry point :func:`lrnnkit.ops.chunk_gh` (fla's signature; backends "chunk", "torch",
"naive") and its trainable layer :class:`lrnnkit.layers.DeltaProductLayer`.
"""
from __future__ import annotations

import torch

from ..errors import InputError


def _pick(mode: str, table: dict, layer: str):
    if mode not in table:
        raise InputError(f"{layer}: unknown mode {mode!r} (choose from {', '.join(table)})")
    return table[mode]


class DiagonalLayer(torch.nn.Module):
    """``h = DiagonalLayer(mode)(a, b, h0=None)``: all states of ``h_t = a_t * h_{t-1} + b_t``, a in [-1, 1]."""

    def __init__(self, mode: str = "chunk"):
        super().__init__()
        from ..ops.diagonal.chunk import diagonal_scan_chunk
        from ..ops.diagonal.fused_recurrent import diagonal_scan_fused
        from ..ops.diagonal.naive import diagonal_scan_naive
        self.fn = _pick(mode, {"chunk": diagonal_scan_chunk, "fused_recurrent": diagonal_scan_fused,
                               "naive": diagonal_scan_naive}, "DiagonalLayer")

    def forward(self, a, b, h0=None):
        return self.fn(a, b, h0)


class BlockDiagonalLayer(torch.nn.Module):
    """``h = BlockDiagonalLayer(mode)(A, b, h0=None)`` with A (B, T, NB, BS, BS) (paper 002)."""

    def __init__(self, mode: str = "fused_recurrent"):
        super().__init__()
        from ..ops.block_diagonal.fused_recurrent import block_diagonal_scan_fused
        from ..ops.block_diagonal.naive import block_diagonal_scan_naive
        self.fn = _pick(mode, {"fused_recurrent": block_diagonal_scan_fused, "naive": block_diagonal_scan_naive},
                        "BlockDiagonalLayer")

    def forward(self, A, b, h0=None):
        return self.fn(A, b, h0)


class BilinearLayer(torch.nn.Module):
    """``h = BilinearLayer(W, mode)(x, b=None, h0=None)``: ``h_t = (sum_i x_ti W_i) h_{t-1} + b_t`` (paper 004);
    ``W`` (Din, d, d) is a buffer of the module."""

    def __init__(self, W: torch.Tensor, mode: str = "fused_recurrent"):
        super().__init__()
        from ..ops.bilinear.fused_recurrent import bilinear_scan_fused
        from ..ops.bilinear.naive import bilinear_scan_naive
        self.fn = _pick(mode, {"fused_recurrent": bilinear_scan_fused, "naive": bilinear_scan_naive},
                        "BilinearLayer")
        self.register_buffer("W", W)

    def forward(self, x, b=None, h0=None):
        return self.fn(x, self.W, b, h0)
