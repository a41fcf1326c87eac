"""Put lrnnkit's :class:`~lrnnkit.layers.DeltaProductLayer` into a model built by flash-linear-attention (fla 0.6.0),
and take it out again: the way an fla user adopts lrnnkit's kernels.

``swap_in(model)`` replaces, in place, every fla ``GatedDeltaProduct`` inside ``model`` (a
``GatedDeltaProductForCausalLM`` from ``fla.models``' config or ``from_pretrained``, or any module tree holding
such layers) by a ``DeltaProductLayer`` with the same keywords (read from the layer: sizes, heads, gates, short
convolution, ``layer_idx``, the output norm's eps) that holds the very same ``Parameter`` objects -- the weights
are not copied, so their dtype, device, ``requires_grad``, fla's ``_no_weight_decay`` marks and any optimizer that
holds them stay valid. ``swap_out(model)`` does the reverse with fla's class. Both return the number of layers
replaced. The two layers compute the same function of the same weights (paper 001's gated DeltaProduct; checked
against a float64 loop of fla's conventions in proofs_tests/layers/test_delta_product.py) and keep the same
decoding cache entries (:mod:`lrnnkit.layers.decode_cache`), so ``model.generate()`` runs through fla's ``Cache``
either way.
"""
from __future__ import annotations

import warnings

import torch

from ..errors import InputError

KEYWORDS = ("hidden_size", "expand_v", "head_dim", "num_heads", "num_v_heads", "mode", "use_output_gate",
            "use_short_conv", "conv_size", "conv_bias", "layer_idx", "use_forget_gate", "allow_neg_eigval",
            "num_householder")


def is_fla_layer(module) -> bool:
    """fla's ``GatedDeltaProduct`` (by its class and package, so fla need not be importable to recognise it)."""
    cls = type(module)
    return cls.__name__ == "GatedDeltaProduct" and cls.__module__.split(".")[0] == "fla"


def layer_keywords(layer) -> dict:
    """The constructor keywords of a ``GatedDeltaProduct`` or ``DeltaProductLayer`` (they share them)."""
    kw = {name: getattr(layer, name) for name in KEYWORDS}
    kw["norm_eps"] = layer.o_norm.eps
    return kw


def _move_parameters(src: torch.nn.Module, dst: torch.nn.Module) -> None:
    """Make ``dst`` hold ``src``'s Parameter objects under the same names (the two layouts must match exactly)."""
    want = {name: tuple(p.shape) for name, p in dst.named_parameters()}
    have = {name: tuple(p.shape) for name, p in src.named_parameters()}
    if want != have:
        diff = sorted(set(want.items()) ^ set(have.items()))
        raise InputError(f"fla_swap: parameter layouts differ ({len(diff)} entries, first {diff[0]})")
    for name, p in src.named_parameters():
        owner, _, leaf = name.rpartition(".")
        (dst.get_submodule(owner) if owner else dst)._parameters[leaf] = p
    dst.train(src.training)


def _replace(model: torch.nn.Module, match, build) -> int:
    if match(model):
        raise InputError("fla_swap: give the model that holds the layers, not a layer itself")
    count = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if match(child):
                new = build(child)
                _move_parameters(child, new)
                setattr(parent, name, new)
                count += 1
    return count


def swap_in(model: torch.nn.Module, **overrides) -> int:
    """Replace every fla ``GatedDeltaProduct`` in ``model`` by a ``DeltaProductLayer`` holding its parameters (module
    text); ``overrides``: lrnnkit's extra keywords (``mode``, ``fp32_precision``, ``keep_states``). Returns the count."""
    from .delta_product import DeltaProductLayer
    bad = sorted(set(overrides) - {"mode", "fp32_precision", "keep_states"})
    if bad:
        raise InputError(f"swap_in: unknown keyword {bad[0]!r} (mode, fp32_precision, keep_states)")
    return _replace(model, is_fla_layer, lambda old: DeltaProductLayer(**{**layer_keywords(old), **overrides}))


def swap_out(model: torch.nn.Module, cls=None) -> int:
    """Replace every ``DeltaProductLayer`` in ``model`` by fla's ``GatedDeltaProduct`` (or ``cls``, a class with its
    keywords) holding its parameters. Returns the count."""
    from .delta_product import DeltaProductLayer
    if cls is None:
        try:
            from fla.layers.gated_deltaproduct import GatedDeltaProduct as cls
        except ImportError as e:
            raise InputError(f"swap_out: fla's GatedDeltaProduct cannot be imported ({e})") from None

    def build(old):
        kw = layer_keywords(old)
        if kw["mode"] not in ("chunk", "fused_recurrent"):      # lrnnkit's extra modes; fla has two
            kw["mode"] = "chunk"
        with warnings.catch_warnings():                          # fla warns when use_short_conv=False
            warnings.simplefilter("ignore")
            return cls(**kw)
    return _replace(model, lambda m: isinstance(m, DeltaProductLayer), build)
