"""Naive sequential torch reference of the GH-product layer (DeltaNet for n_h = 1, DeltaProduct for n_h > 1).

Paper 001 (DeltaProduct), eq. for the recurrence: each token applies n_h generalized Householder steps
``S <- (I - beta_j k_j k_j^T) S + beta_j k_j v_j^T`` (state S is K x V, keys unit, beta in [0, 2]), so the token's
transition is ``A = G_{n_h} ... G_1`` with ``G_j = I - beta_j k_j k_j^T`` (eigenvalues in [-1, 1]); with a gate
the state is first scaled by ``exp(g_t)`` (fla's gated DeltaProduct convention). Output ``o_t = scale * S_t^T q_t``.

This loop is the definition the kernels are tested against. It computes in the accumulation dtype (float64 for
float64 inputs, float32 otherwise) and is differentiable by torch autograd.
"""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .inputs import prepare


def delta_product_naive(q, k, v, beta, g=None, *, scale: float | None = None, initial_state=None,
                        output_final_state: bool = False, normalize: bool = False, validate: bool = True):
    """Returns ``(o, final_state)``; ``o`` (B, T, H, V) in q's dtype, ``final_state`` (B, H, K, V) or None.
    ``scale`` defaults to ``K ** -0.5`` (fla's default, as every GH backend)."""
    x = prepare(q, k, v, beta, g, initial_state, normalize=normalize, validate=validate)
    B, T, H, K, V = x.dims
    scale = K ** -0.5 if scale is None else scale
    dt = acc_dtype(q.dtype)
    S = (x.h0.to(dt) if x.h0 is not None else torch.zeros(B, H, K, V, dtype=dt, device=q.device))
    qf, kf, vf, bf = x.q.to(dt), x.k.to(dt), x.v.to(dt), x.beta.to(dt)
    gf = x.g.to(dt) if x.g is not None else None
    outs = []
    for t in range(T):
        if gf is not None:
            S = S * torch.exp(gf[:, t])[..., None, None]
        for j in range(x.n_h):
            kj, vj, bj = kf[:, t, j], vf[:, t, j], bf[:, t, j]          # (B,H,K), (B,H,V), (B,H)
            kS = torch.einsum("bhk,bhkv->bhv", kj, S)
            S = S + bj[..., None, None] * kj[..., :, None] * (vj - kS)[..., None, :]
        outs.append(scale * torch.einsum("bhk,bhkv->bhv", qf[:, t], S))
    o = torch.stack(outs, 1) if outs else torch.zeros(B, 0, H, V, dtype=dt, device=q.device)
    return o.to(q.dtype), (S if output_final_state else None)
