"""The model format: the one intermediate representation every part of lrnnkit exchanges (paper 000, eq. 1).

One concept per module:

* :mod:`lrnnkit.model.ir`: :class:`~lrnnkit.model.ir.Model`, a stack of LRNN layers with its readout (the
  semantics are stated there);
* :mod:`lrnnkit.model.layer`: the pieces of a layer (``Read``, ``TableMap``, ``GHFactor``, ``Transition``,
  ``Decoder``, ``Layer``);
* :mod:`lrnnkit.model.io`: the JSON / safetensors file format (``Model.save`` / ``Model.load``);
* :mod:`lrnnkit.model.consistency`: float weights against exact weights
  (:func:`~lrnnkit.model.consistency.consistency_problems`);
* :mod:`lrnnkit.model.linalg`: exact arithmetic of the weights and generalized Householder factors.

``from lrnnkit.model import Model, TableMap, consistency_problems, exact_matmul, ...`` keeps working: the names are
re-exported here.
"""
from .consistency import CONSISTENCY_TOL, MAX_PROBLEMS, canonicalize_floats, consistency_problems
from .io import INLINE_LIMIT, SCHEMA, VERSION
from .ir import Model
from .layer import LAYER_KINDS, Decoder, GHFactor, Layer, Read, TableMap, Transition
from .linalg import exact_identity, exact_matmul, exact_matvec, gh_matrix_exact, gh_matrix_float, is_zero_exact

__all__ = ["Read", "TableMap", "GHFactor", "Transition", "Decoder", "Layer", "Model", "SCHEMA", "VERSION",
           "consistency_problems", "canonicalize_floats", "exact_matmul", "exact_matvec", "exact_identity",
           "gh_matrix_exact", "gh_matrix_float"]
