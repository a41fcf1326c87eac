"""Every ``torch.nn.Module`` a user builds, on the kernels of :mod:`lrnnkit.ops` (fla keeps ``layers/`` and
``modules/`` apart from ``ops/`` the same way):

* :class:`DeltaProductLayer` (:mod:`.delta_product`): the trainable DeltaNet / DeltaProduct layer, a drop-in for
  fla's ``GatedDeltaProduct`` (same keywords, forward contract and state_dict), on :func:`lrnnkit.ops.chunk_gh`;
* :class:`FixedPointLayer` (:mod:`.fixed_point`): 003's Fixed-Point RNN, a diagonal scan iterated to the fixed
  point of a dense linear RNN, with the same layer conventions;
* :class:`ShortConvolution`, :class:`RMSNorm`, :class:`GatedRMSNorm`: their pieces, with fla's parameter names;
* :class:`DiagonalLayer`, :class:`BlockDiagonalLayer`, :class:`BilinearLayer` (:mod:`.scans`): the other layer
  kinds of the model format, choosing naive / fused_recurrent / chunk by ``mode``;
* :class:`LoadedModel`, :func:`load`, :func:`run_model` (:mod:`.compiled`): a compiled
  :class:`~lrnnkit.model.ir.Model` as a torch module;
* the mixers of :mod:`lrnnkit.learn.models` (:mod:`.mixers`), chosen from a table by layer kind, among them
  :class:`MambaMixer` (:mod:`.mamba`): Mamba's selective block with 000's eigenvalue range, the model 000 and 003
  train;
* :mod:`.layer_io` (fla's forward contract), :mod:`.decode_cache` (fla's cache contract, :class:`RecurrentCache`
  without fla) and :mod:`.fla_swap` (``swap_in`` / ``swap_out``: the layer in and out of fla's models).
"""
from .compiled import LoadedModel, load, run_model
from .delta_product import DeltaProductLayer
from .fixed_point import FixedPointLayer
from .mamba import MambaMixer
from .norm import GatedRMSNorm, RMSNorm
from .scans import BilinearLayer, BlockDiagonalLayer, DiagonalLayer
from .short_conv import ShortConvolution

__all__ = ["load", "run_model", "LoadedModel", "DiagonalLayer", "BlockDiagonalLayer", "BilinearLayer",
           "DeltaProductLayer", "ShortConvolution", "RMSNorm", "GatedRMSNorm", "FixedPointLayer", "MambaMixer"]
