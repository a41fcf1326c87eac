"""GH-product layer kernels (DeltaNet n_h = 1, DeltaProduct n_h > 1): ``naive`` (reference loop),
``fused_recurrent`` (inference), ``wy`` (the chunked WY kernels: trainable forward + backward, gate, varlen; its
kernels live by stage in ``wy_t``, ``wy_state``, ``wy_output``, ``wy_grad``, with ``wy_common`` and ``tiles``
shared and every setting in ``wy_config``), ``reference`` (the chunk equations in torch); :func:`chunk_gh` is the
fla-style entry point."""
from .api import chunk_gh

__all__ = ["chunk_gh"]
