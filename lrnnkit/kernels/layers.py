"""torch.nn.Module front-ends of the layer kernels, choosing the implementation by ``mode``.

Each module is stateless (no learned weights: projections belong to the model that uses the layer) and computes
exactly what its ``naive`` reference defines; ``mode`` picks the kernel:

* :class:`GHLayer` (DeltaNet n_h = 1 / DeltaProduct n_h > 1, paper 001): ``"chunk"`` (the trainable Triton
  kernels of :mod:`lrnnkit.kernels.gh.wy`: chunked forward and backward, gate supported; default),
  ``"fused_recurrent"`` (Triton, inference, supports the gate), ``"naive"``.
* :class:`DiagonalLayer`: ``"chunk"`` (associative scan), ``"fused_recurrent"``, ``"naive"``.
* :class:`BlockDiagonalLayer`, :class:`BilinearLayer`: ``"fused_recurrent"``, ``"naive"``.

Triton modes need CUDA tensors, or CPU tensors with TRITON_INTERPRET=1. For training a DeltaNet / DeltaProduct
token mixer (projections, short convolution, gate, Triton backward) use :class:`lrnnkit.kernels.DeltaProductLayer`.
"""
from __future__ import annotations

import torch

from ..errors import InputError


def _pick(mode: str, table: dict, layer: str):
    if mode not in table:
        raise InputError(f"{layer}: unknown mode {mode!r} (choose from {', '.join(table)})")
    return table[mode]


class GHLayer(torch.nn.Module):
    """``o, S_T = GHLayer(mode)(q, k, v, beta, g=None, initial_state=None)``; see :mod:`lrnnkit.kernels.gh.inputs`
    for shapes. ``scale`` multiplies the outputs; ``normalize`` L2-normalizes keys (else non-unit keys raise)."""

    def __init__(self, mode: str = "chunk", scale: float = 1.0, normalize: bool = False, validate: bool = True):
        super().__init__()
        from .gh.fused_recurrent import fused_recurrent_delta_product
        from .gh.naive import delta_product_naive
        self.fn = _pick(mode, {"chunk": _gh_chunk, "fused_recurrent": fused_recurrent_delta_product,
                               "naive": delta_product_naive}, "GHLayer")
        self.mode, self.scale, self.normalize, self.validate = mode, scale, normalize, validate

    def forward(self, q, k, v, beta, g=None, initial_state=None, output_final_state: bool = False):
        return self.fn(q, k, v, beta, g, scale=self.scale, initial_state=initial_state,
                       output_final_state=output_final_state, normalize=self.normalize, validate=self.validate)


def _gh_chunk(q, k, v, beta, g=None, *, scale: float = 1.0, initial_state=None, output_final_state: bool = False,
              normalize: bool = False, validate: bool = True):
    """GHLayer's "chunk" mode: :func:`lrnnkit.kernels.gh.wy.chunk_gh_triton` (forward and backward in Triton) on
    the inputs as :func:`lrnnkit.kernels.gh.inputs.prepare` validates them; o in q's dtype."""
    from .gh.inputs import prepare
    from .gh.wy import chunk_gh_triton, default_chunk
    x = prepare(q, k, v, beta, g, initial_state, normalize=normalize, validate=validate)
    o, ht = chunk_gh_triton(x.q, x.k, x.v, x.beta, x.g, scale, x.h0, None, default_chunk(x.q.dtype))
    return o.to(x.q.dtype), (ht if output_final_state else None)


class DiagonalLayer(torch.nn.Module):
    """``h = DiagonalLayer(mode)(a, b, h0=None)``: all states of ``h_t = a_t * h_{t-1} + b_t``, a in [-1, 1]."""

    def __init__(self, mode: str = "chunk"):
        super().__init__()
        from .diagonal.chunk import diagonal_scan_chunk
        from .diagonal.fused_recurrent import diagonal_scan_fused
        from .diagonal.naive import diagonal_scan_naive
        self.fn = _pick(mode, {"chunk": diagonal_scan_chunk, "fused_recurrent": diagonal_scan_fused,
                               "naive": diagonal_scan_naive}, "DiagonalLayer")

    def forward(self, a, b, h0=None):
        return self.fn(a, b, h0)


class BlockDiagonalLayer(torch.nn.Module):
    """``h = BlockDiagonalLayer(mode)(A, b, h0=None)`` with A (B, T, NB, BS, BS) (paper 002)."""

    def __init__(self, mode: str = "fused_recurrent"):
        super().__init__()
        from .block_diagonal.fused_recurrent import block_diagonal_scan_fused
        from .block_diagonal.naive import block_diagonal_scan_naive
        self.fn = _pick(mode, {"fused_recurrent": block_diagonal_scan_fused, "naive": block_diagonal_scan_naive},
                        "BlockDiagonalLayer")

    def forward(self, A, b, h0=None):
        return self.fn(A, b, h0)


class BilinearLayer(torch.nn.Module):
    """``h = BilinearLayer(W, mode)(x, b=None, h0=None)``: ``h_t = (sum_i x_ti W_i) h_{t-1} + b_t`` (paper 004);
    ``W`` (Din, d, d) is a buffer of the module."""

    def __init__(self, W: torch.Tensor, mode: str = "fused_recurrent"):
        super().__init__()
        from .bilinear.fused_recurrent import bilinear_scan_fused
        from .bilinear.naive import bilinear_scan_naive
        self.fn = _pick(mode, {"fused_recurrent": bilinear_scan_fused, "naive": bilinear_scan_naive},
                        "BilinearLayer")
        self.register_buffer("W", W)

    def forward(self, x, b=None, h0=None):
        return self.fn(x, self.W, b, h0)
