"""The gated, variable-length chunk equations in plain torch: the reference of the trainable Triton kernels
(:mod:`.wy`) and the CPU path of :class:`lrnnkit.layers.DeltaProductLayer`.

Interleaving (paper 001, DeltaProduct; fla's ``chunk_gated_delta_product``): a token's n_h triples (k_j, v_j, b_j)
become n_h consecutive positions of a sequence n_h times longer; the gate g_t sits on the first of them (0 on the
others) and the query on the last (0 on the others, whose outputs are dropped). Per position i::

    S_i = exp(g_i) (I - b_i k_i k_i^T) S_{i-1} + b_i k_i v_i^T,        o_i = S_i^T q_i

Chunk form (C positions, S_0 the state entering the chunk, G the cumulative sum of g inside the chunk,
gamma = exp(G), Gamma_ij = exp(G_i - G_j); derivation in :mod:`.wy`, following Yang et al. 2024 (DeltaNet) and
Gated DeltaNet)::

    A = strictly_lower(diag(b) K K^T * Gamma),  T = (I + A)^{-1},  W = T diag(b gamma) K,  U = T diag(b) V
    U' = U - W S_0
    O  = diag(gamma) Q S_0 + (Q K^T * Gamma, lower triangle incl. diagonal) U'
    S_C = gamma_C S_0 + (diag(exp(G_C - G)) K)^T U'

Differentiable by torch autograd. ``cu_seqlens`` (packed sequences, fla's convention: B = 1, token offsets of the
N sequences) runs each sequence on its own; the initial / final states are then (N, H, K, V).
"""
from __future__ import annotations

import torch

from .._checks import acc_dtype

# The chunk length of the torch path when the caller names none. A chunk's C x C products and triangular solves
# cost O(L C) work for L positions, the loop over chunks L / C Python steps: on a CPU, 16 balances the two for
# training words of tens of letters (benchmarks/RESULTS.md, "train defaults").
TORCH_CHUNK = 16


def _one_sequence(q, k, v, beta, g, h0, scale, C, dt):
    """q (B,T,H,K), k (B,T,NH,H,K), v (B,T,NH,H,V), beta (B,T,NH,H), g (B,T,H) or None, h0 (B,H,K,V) or None."""
    B, T, H, K = q.shape
    NH, V = k.shape[2], v.shape[-1]
    L = T * NH
    N = -(-L // C)
    pad = N * C - L
    kf = k.to(dt).reshape(B, L, H, K)
    vf = v.to(dt).reshape(B, L, H, V)
    bf = beta.to(dt).reshape(B, L, H)
    qi = torch.zeros(B, T, NH, H, K, dtype=dt, device=q.device)
    qi[:, :, NH - 1] = q.to(dt) * scale
    qi = qi.reshape(B, L, H, K)
    gi = torch.zeros(B, T, NH, H, dtype=dt, device=q.device)
    if g is not None:
        gi[:, :, 0] = g.to(dt)
    gi = gi.reshape(B, L, H)
    P = torch.nn.functional.pad
    if pad:  # zero keys, betas and gates: identity steps that write nothing
        kf, vf, qi = P(kf, (0, 0, 0, 0, 0, pad)), P(vf, (0, 0, 0, 0, 0, pad)), P(qi, (0, 0, 0, 0, 0, pad))
        bf, gi = P(bf, (0, 0, 0, pad)), P(gi, (0, 0, 0, pad))
    kc = kf.reshape(B, N, C, H, K).permute(0, 3, 1, 2, 4)       # (B,H,N,C,K)
    vc = vf.reshape(B, N, C, H, V).permute(0, 3, 1, 2, 4)
    qc = qi.reshape(B, N, C, H, K).permute(0, 3, 1, 2, 4)
    bc = bf.reshape(B, N, C, H).permute(0, 3, 1, 2)[..., None]  # (B,H,N,C,1)
    G = gi.reshape(B, N, C, H).permute(0, 3, 1, 2).cumsum(-1)   # (B,H,N,C)
    low = torch.tril(torch.ones(C, C, dtype=torch.bool, device=q.device))
    diff = (G[..., :, None] - G[..., None, :]).masked_fill(~low, 0.0)
    Gam = torch.exp(diff).masked_fill(~low, 0.0)                 # (B,H,N,C,C), lower incl. diagonal
    gam = torch.exp(G)[..., None]
    eye = torch.eye(C, dtype=dt, device=q.device)
    A = torch.tril((bc * kc) @ kc.transpose(-1, -2) * Gam, -1)
    W = torch.linalg.solve_triangular(eye + A, bc * gam * kc, upper=False, unitriangular=True)
    U = torch.linalg.solve_triangular(eye + A, bc * vc, upper=False, unitriangular=True)
    S = h0.to(dt) if h0 is not None else torch.zeros(B, H, K, V, dtype=dt, device=q.device)
    outs = []
    for n in range(N):
        Kn, Qn, Gn = kc[:, :, n], qc[:, :, n], G[:, :, n]
        Un = U[:, :, n] - W[:, :, n] @ S
        outs.append(gam[:, :, n] * (Qn @ S) + (Qn @ Kn.transpose(-1, -2) * Gam[:, :, n]) @ Un)
        decay = torch.exp(Gn[..., -1:] - Gn)[..., None]           # exp(G_C - G_j)
        S = torch.exp(Gn[..., -1])[..., None, None] * S + (decay * Kn).transpose(-1, -2) @ Un
    if not outs:   # an empty sequence: no outputs, the state passes through
        return torch.zeros(B, 0, H, V, dtype=dt, device=q.device), S
    O = torch.stack(outs, 2).reshape(B, H, N * C, V)[:, :, :L].permute(0, 2, 1, 3)   # (B, L, H, V)
    return O.reshape(B, T, NH, H, V)[:, :, NH - 1], S


def chunk_gh_torch(q, k, v, beta, g=None, *, scale: float = 1.0, initial_state=None, cu_seqlens=None,
                   chunk_size: int = TORCH_CHUNK):
    """Canonical shapes: q (B,T,H,K), k (B,T,NH,H,K), v (B,T,NH,H,V), beta (B,T,NH,H), g (B,T,H) or None.
    Returns ``(o, final_state)`` with o in the accumulation dtype (float64 for float64 inputs, else float32)."""
    dt = acc_dtype(q.dtype)
    if cu_seqlens is None:
        return _one_sequence(q, k, v, beta, g, initial_state, scale, chunk_size, dt)
    bounds = [int(x) for x in cu_seqlens.tolist()]
    outs, finals = [], []
    for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        h0 = initial_state[s:s + 1] if initial_state is not None else None
        sl = slice(a, b)
        o, S = _one_sequence(q[:, sl], k[:, sl], v[:, sl], beta[:, sl], None if g is None else g[:, sl], h0, scale,
                             chunk_size, dt)
        outs.append(o)
        finals.append(S)
    return torch.cat(outs, 1), torch.cat(finals, 0)
