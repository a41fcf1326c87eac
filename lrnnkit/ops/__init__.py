"""Torch layers and Triton kernels for LRNNs, and a loader that runs compiled lrnnkit models.

Layout mirrors flash-linear-attention's ``ops/<family>/``: each family has ``naive.py`` (sequential torch
reference, any dtype), ``fused_recurrent.py`` (state on chip, for inference and small widths) and, where it pays,
a chunk-parallel module for long sequences (``chunk.py``; ``gh/wy.py`` for the GH family, its kernels by stage
in ``gh/wy_*.py``).

* :mod:`.gh`: generalized-Householder products (DeltaNet n_h = 1, DeltaProduct n_h > 1; optional gate)
* :mod:`.diagonal`, :mod:`.block_diagonal`, :mod:`.bilinear`: the other layer kinds of the model format
* :mod:`.table`: symbol-indexed affine scans with a fused argmax decoder (compiled model layers)
* :func:`load` / :func:`run_model`: run a whole :class:`~lrnnkit.model.ir.Model`
* :mod:`.layers`: nn.Module front-ends choosing naive / fused_recurrent / chunk
* :class:`DeltaProductLayer` (:mod:`.delta_product`): the trainable DeltaNet / DeltaProduct layer, a drop-in for
  fla's ``GatedDeltaProduct`` (same keywords, forward contract and state_dict), on :func:`chunk_gh`
  (:mod:`.gh.api`: fla's ``chunk_gated_delta_product`` signature, differentiable, gate, cu_seqlens)
* :class:`ShortConvolution`, :class:`RMSNorm`, :class:`GatedRMSNorm`: its pieces, with fla's parameter names
* :mod:`.decode_cache` (fla's cache contract for incremental decoding, :class:`RecurrentCache` without fla) and
  :mod:`.fla_swap` (``swap_in`` / ``swap_out``: the layer in and out of fla's models, weights kept)
* :class:`FixedPointLayer` (:mod:`.fixed_point`): 003's Fixed-Point RNN, a diagonal scan iterated to the fixed
  point of a dense linear RNN, with the same layer conventions

Triton is imported lazily (first kernel use); without a GPU it runs in interpreter mode (TRITON_INTERPRET=1).
"""
from .compiled import LoadedModel, load, run_model
from .delta_product import DeltaProductLayer
from .fixed_point import FixedPointLayer
from .gh.api import chunk_gh
from .layers import BilinearLayer, BlockDiagonalLayer, DiagonalLayer
from .norm import GatedRMSNorm, RMSNorm
from .short_conv import ShortConvolution

__all__ = ["load", "run_model", "LoadedModel", "DiagonalLayer", "BlockDiagonalLayer", "BilinearLayer",
           "DeltaProductLayer", "chunk_gh", "ShortConvolution", "RMSNorm", "GatedRMSNorm", "FixedPointLayer"]
