"""``RecurrentCache``: the per-layer decoding state of lrnnkit's layers in the shape of flash-linear-attention 0.6.0's
``fla.models.utils.Cache`` (fla/models/cache_utils.py), for use where fla is not installed; with fla, pass fla's
own ``Cache`` (the layers only use the calls below, which both have).

The contract the layers rely on (fla's): ``len(cache)`` is the number of layers stored so far; ``cache[layer_idx]``
is that layer's dict with the four keys of fla's ``FLALayer`` state, ``recurrent_state``, ``attn_state``,
``conv_state``, ``ffn_state`` (None where a layer keeps none); ``cache.update(recurrent_state=..., conv_state=...,
layer_idx=i, offset=T)`` stores the entries given (an entry passed as None keeps the stored one) and counts T more
tokens for layer i; ``get_seq_length(layer_idx)`` is that count. For :class:`~lrnnkit.layers.DeltaProductLayer`
the entries are fla's ``GatedDeltaProduct``'s: ``recurrent_state`` (N, H_v, K, V) float32 (float64 for a float64
layer), the state S of the recurrence (``o_t = S^T q_t / sqrt(K)``); ``conv_state`` the tuple (q, k, v) of
(N, C, W) short-convolution states (:mod:`lrnnkit.ops.short_conv`), or None without short convolutions.
"""
from __future__ import annotations

import torch

from ..errors import InputError

KEYS = ("recurrent_state", "attn_state", "conv_state", "ffn_state")


class RecurrentCache:
    """``RecurrentCache()``: fla's ``Cache`` contract (module text) without fla or transformers."""

    def __init__(self, seen_tokens: int = 0):
        self.states: list[dict] = []
        self._seen: list[int] = []
        self._start = int(seen_tokens)

    def __len__(self) -> int:
        return len(self.states)

    def __getitem__(self, layer_idx: int) -> dict:
        if layer_idx >= len(self.states):
            raise KeyError(f"Cache only has {len(self.states)} layers, attempted to access layer with index "
                           f"{layer_idx}")
        return self.states[layer_idx]

    def __iter__(self):
        yield from self.states

    def update(self, recurrent_state=None, attn_state=None, conv_state=None, ffn_state=None, layer_idx: int = 0,
               offset: int | None = 1, cache_kwargs: dict | None = None) -> dict:
        """Store the entries given for ``layer_idx`` (None keeps what is stored) and count ``offset`` tokens (None
        counts 1, as fla). Returns the layer's dict."""
        while len(self.states) <= layer_idx:
            self.states.append(dict.fromkeys(KEYS))
            self._seen.append(self._start)
        state = self.states[layer_idx]
        for key, val in zip(KEYS, (recurrent_state, attn_state, conv_state, ffn_state)):
            if val is not None:
                state[key] = val
        self._seen[layer_idx] += 1 if offset is None else int(offset)
        return state

    def get_seq_length(self, layer_idx: int | None = 0) -> int:
        i = layer_idx or 0
        return self._seen[i] if i < len(self._seen) else 0

    def reorder_cache(self, beam_idx: torch.Tensor) -> None:
        """Select / reorder the batch rows of every stored tensor (beam search), as fla's."""
        def pick(val):
            if isinstance(val, torch.Tensor):
                return val.index_select(0, beam_idx.to(val.device))
            if isinstance(val, (tuple, list)):
                return type(val)(pick(v) for v in val)
            return val
        self.states = [{key: pick(val) for key, val in state.items()} for state in self.states]

    def reset(self) -> None:
        self.states, self._seen = [], []

    def to_legacy_cache(self) -> tuple:
        return tuple(self.states)


def layer_state(where: str, layer_idx, past_key_values) -> dict | None:
    """fla's ``get_layer_cache``: the layer's stored dict, or None (no cache, or nothing stored for this layer
    yet). A cache needs the layer's ``layer_idx`` (one-line InputError otherwise, as fla refuses)."""
    if past_key_values is None:
        return None
    if layer_idx is None:
        raise InputError(f"{where} requires `layer_idx` when `past_key_values` is provided")
    return past_key_values[layer_idx] if len(past_key_values) > layer_idx else None
