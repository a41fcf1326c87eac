"""The forward contract shared by lrnnkit's trainable layers (:class:`~lrnnkit.layers.DeltaProductLayer`,
:class:`~lrnnkit.layers.FixedPointLayer`), fla's layer contract: ``forward(hidden_states, attention_mask=None,
past_key_values=None, use_cache=False, output_attentions=False, **kwargs) -> (o, None, past_key_values)``.

A 2-D 0/1 ``attention_mask`` (1 = keep) packs the kept tokens of every row into one sequence of B = 1 with
``cu_seqlens`` boundaries (rows without tokens dropped); the outputs are put back in place, zeros at padding. A
``cu_seqlens`` keyword (B = 1) packs sequences directly. Other keywords are ignored, as fla's layers do inside fla's
model blocks. A layer that decodes incrementally (``decoding=True``) takes ``past_key_values`` / ``use_cache``, and
then, as fla's ``unpad_hidden_states``: a mask wider than T (the whole history, as ``generate`` passes it) is read
at its last T columns, rows without tokens stay as empty sequences (one state per batch row), and a mask that keeps
every token packs nothing (the batch as it is). Other layers refuse a cache on one line.
``cu_seqlens`` must be a 1-D integer tensor (a float tensor or a list is refused, never truncated).

Dtypes: outside autocast, :class:`~lrnnkit.layers.DeltaProductLayer` takes ``hidden_states`` in its parameters'
dtype (:func:`check_dtype`: a mix is one InputError naming both, as fla's layers would fail inside a matmul);
:class:`~lrnnkit.layers.FixedPointLayer` computes in float32 (float64 for float64 input) whatever the input's
dtype and returns the input's dtype.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import InputError
from ..ops._checks import check_offsets


def pack(where: str, x, hidden_size: int, attention_mask, past_key_values, use_cache, kwargs: dict,
         decoding: bool = False):
    """Check the forward's inputs; returns ``(x_packed, cu_seqlens or None, put_back)`` where ``put_back(o)`` gives
    the outputs of the packed tokens the input's (B, T) layout (the identity without a mask). ``decoding``: see the
    module text."""
    if not isinstance(x, torch.Tensor) or x.ndim != 3 or x.shape[-1] != hidden_size:
        raise InputError(f"{where}: expected hidden_states of shape (B, T, {hidden_size}), got "
                         f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
    if not x.is_floating_point():
        raise InputError(f"{where}: hidden_states must be floating point, got {x.dtype}")
    if (past_key_values is not None or use_cache) and not decoding:
        raise InputError(f"{where}: incremental decoding (past_key_values / use_cache) is not supported")
    cu_seqlens = kwargs.get("cu_seqlens")
    B, T, _ = x.shape
    given = attention_mask
    if attention_mask is not None and decoding and isinstance(attention_mask, torch.Tensor) \
            and attention_mask.ndim == 2 and attention_mask.shape[0] == B and attention_mask.shape[1] > T:
        attention_mask = attention_mask[:, -T:]      # fla: the mask of the whole history, read at the new tokens
    if attention_mask is not None:
        if not isinstance(attention_mask, torch.Tensor) or attention_mask.ndim != 2 \
                or tuple(attention_mask.shape) != (B, T):
            raise InputError(f"{where}: attention_mask must be a 0/1 matrix of shape (B, T) = {(B, T)}, got "
                             f"{tuple(getattr(attention_mask, 'shape', ()))}")
        if cu_seqlens is not None:
            raise InputError(f"{where}: give attention_mask or cu_seqlens, not both")
        indices, cu = _mask_plan(where, attention_mask, decoding, given)
        if indices is None:
            return x, None, lambda o: o
        return x.flatten(0, 1)[indices][None], cu, lambda o: unpack(o, indices, B, T)
    if cu_seqlens is not None:
        if B != 1:
            raise InputError(f"{where}: cu_seqlens needs packed inputs with B = 1, got B = {B}")
        check_offsets(f"{where}: ", cu_seqlens, T)
    return x, cu_seqlens, lambda o: o


_LAST_PLAN: list = [None]     # (mask, width, decoding, plan): the layers of one model step share one mask (fla caches too)


def _mask_plan(where: str, mask: torch.Tensor, decoding: bool, given: torch.Tensor):
    """(indices of the kept tokens, cu_seqlens int32) of a (B, T) 0/1 mask, or (None, None) when a decoding layer
    keeps every token. Host reads: the 0/1 check, the count; remembered for the last mask object the caller gave
    (``given``, before any slicing) and its width, so the layers of one model step read it once."""
    key = (given, mask.shape[1], decoding)
    last = _LAST_PLAN[0]
    if last is not None and last[0] is given and last[1:] == key[1:]:
        return last[3]
    if bool(((mask != 0) & (mask != 1)).any()):
        raise InputError(f"{where}: attention_mask must hold only 0 (padding) and 1 (keep)")
    keep = mask.to(torch.bool)
    if decoding and bool(keep.all()):
        plan = (None, None)
    else:
        indices = keep.flatten().nonzero().flatten()
        lens = keep.sum(-1)
        cu = F.pad(lens.cumsum(0), (1, 0))
        if not decoding:
            cu = cu[torch.cat([cu[:1] >= 0, lens > 0])]                # rows without tokens dropped
        plan = (indices, cu.to(torch.int32))
    _LAST_PLAN[0] = (*key, plan)
    return plan


def check_dtype(where: str, x: torch.Tensor, layer: torch.nn.Module) -> None:
    """Outside autocast, ``hidden_states`` must have the layer's parameter dtype (InputError naming both, instead of
    torch's "expected m1 and m2 to have the same dtype")."""
    p = next(layer.parameters(), None)
    if p is None or x.dtype == p.dtype or torch.is_autocast_enabled(x.device.type):
        return
    raise InputError(f"{where}: hidden_states has dtype {x.dtype}, the layer's parameters {p.dtype}: convert one "
                     f"(layer.to({x.dtype}) or hidden_states.to({p.dtype})), or run under torch.autocast")


def unpack(o: torch.Tensor, indices, B: int, T: int) -> torch.Tensor:
    """The packed outputs (1, N, D) back at their positions of a (B, T, D) batch, zeros at padding."""
    out = o.new_zeros(B * T, o.shape[-1])
    out[indices] = o[0]
    return out.reshape(B, T, -1)
