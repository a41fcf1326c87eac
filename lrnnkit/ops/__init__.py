"""Triton kernels and their torch references, one folder per recurrence, as flash-linear-attention's ``ops/``.

Each family has ``naive.py`` (sequential torch reference, any dtype), ``fused_recurrent.py`` (state on chip, for
inference and small widths) and, where it pays, a chunk-parallel module for long sequences (``chunk.py``;
``gh/wy.py`` for the GH family, its kernels by stage in ``gh/wy_*.py``).

* :mod:`.gh`: generalized-Householder products (DeltaNet n_h = 1, DeltaProduct n_h > 1; optional gate), with the
  functional entry point :func:`chunk_gh` (:mod:`.gh.api`: fla's ``chunk_gated_delta_product`` signature,
  differentiable, gate, cu_seqlens)
* :mod:`.diagonal`, :mod:`.block_diagonal`, :mod:`.bilinear`: the other layer kinds of the model format; the
  first two train on their kernels (:func:`.diagonal.parallel.diagonal_scan`,
  :func:`.block_diagonal.differentiable.block_diagonal_scan`), the backward from :mod:`.linear_scan` (the same
  recurrence reversed)
* :mod:`.table`: symbol-indexed affine scans with a fused argmax decoder (compiled model layers)
* :mod:`.l2norm`, :mod:`.norm`, :mod:`.short_conv`: the kernels of the layers' pieces (key normalisation, RMSNorm,
  the causal depthwise convolution)

The ``torch.nn.Module`` layers built on them are in :mod:`lrnnkit.layers`. Triton is imported lazily (first kernel
use); without a GPU it runs in interpreter mode (TRITON_INTERPRET=1).
"""
from .gh.api import chunk_gh

__all__ = ["chunk_gh"]
