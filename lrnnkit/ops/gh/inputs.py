"""Shapes and validation of the GH-product (DeltaNet / DeltaProduct) layer inputs.

Layout (fla's ``[B, T, H, ...]``, paper 001's DeltaProduct with ``n_h`` Householder steps per token):

* ``q``: (B, T, H, K) queries; ``k``: (B, T, n_h, H, K) unit keys (or (B, T, H, K) for n_h = 1);
* ``v``: (B, T, n_h, H, V) values (or (B, T, H, V)); ``beta``: (B, T, n_h, H) in [0, 2] (or (B, T, H));
* ``g``: optional (B, T, H) log-gate (natural log, <= 0 for a decay), applied before the token's factors;
* ``initial_state``: optional (B, H, K, V), or (N, H, K, V) for N packed sequences (``n_seq``, B = 1).

Recurrence of one token (factor j = 1..n_h, the later factor on the left as in docs/conventions.rst)::

    S <- exp(g_t) S;   S <- (I - beta_j k_j k_j^T) S + beta_j k_j v_j^T  (j = 1..n_h);   o_t = scale * S^T q_t
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...errors import InputError
from .._checks import check_gh, check_shape, l2_normalize


@dataclass
class GHInputs:
    q: torch.Tensor
    k: torch.Tensor      # (B, T, NH, H, K)
    v: torch.Tensor      # (B, T, NH, H, V)
    beta: torch.Tensor   # (B, T, NH, H)
    g: torch.Tensor | None
    h0: torch.Tensor | None
    n_h: int

    @property
    def dims(self):
        B, T, H, K = self.q.shape
        return B, T, H, K, self.v.shape[-1]


def prepare(q, k, v, beta, g=None, initial_state=None, *, normalize: bool = False, validate: bool = True,
            n_seq: int | None = None) -> GHInputs:
    """Bring the inputs to the canonical shapes above; with ``validate`` check dtypes, shapes, finiteness, unit keys
    and ``beta in [0, 2]``; with ``normalize`` L2-normalize the keys first (explicitly asked for, never silent).
    ``n_seq``: the number of packed sequences the initial state holds (None: B)."""
    for name, x in (("q", q), ("k", k), ("v", v), ("beta", beta)):
        if not isinstance(x, torch.Tensor):
            raise InputError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if q.ndim != 4:
        raise InputError(f"q: expected shape (B, T, H, K), got {tuple(q.shape)}")
    B, T, H, K = q.shape
    if k.ndim == 4:
        k = k.unsqueeze(2)
    if v.ndim == 4:
        v = v.unsqueeze(2)
    if beta.ndim == 3:
        beta = beta.unsqueeze(2)
    if k.ndim != 5:
        raise InputError(f"k: expected shape (B, T, n_h, H, K) or (B, T, H, K), got {tuple(k.shape)}")
    n_h = k.shape[2]
    if n_h < 1:
        raise InputError("k: n_h (axis 2) must be at least 1")
    if v.ndim != 5:
        raise InputError(f"v: expected shape (B, T, n_h, H, V) or (B, T, H, V), got {tuple(v.shape)}")
    V = v.shape[-1]
    check_shape("k", k, (B, T, n_h, H, K))
    check_shape("v", v, (B, T, n_h, H, V))
    check_shape("beta", beta, (B, T, n_h, H))
    if K < 1 or V < 1 or H < 1:
        raise InputError(f"unsupported shape: K={K}, V={V}, H={H} must be positive")
    devs = {x.device for x in (q, k, v, beta)}
    if g is not None:
        if not isinstance(g, torch.Tensor):
            raise InputError(f"g: expected a torch.Tensor, got {type(g).__name__}")
        check_shape("g", g, (B, T, H))
        devs.add(g.device)
    if initial_state is not None:
        check_shape("initial_state", initial_state, (B if n_seq is None else n_seq, H, K, V))
        devs.add(initial_state.device)
    if len(devs) > 1:
        raise InputError(f"inputs live on different devices: {sorted(str(d) for d in devs)}")
    if validate or normalize:
        check_gh(q, k, v, beta, g, initial_state, same_dtype=True, unit_keys=False, ranges=False)
    if normalize:
        k = l2_normalize(k)
    if validate:
        check_gh(q, k, v, beta, g, finite=False)
    return GHInputs(q, k, v, beta, g, initial_state, n_h)
