"""A tiny float64 case of the chunked GH kernels (:mod:`lrnnkit.ops.gh.wy`) and, in plain torch, what each stage
computes (the chunk equations of :mod:`lrnnkit.ops.gh.reference`, per chunk, kept apart): the stage tests
(test_wy_t.py, test_wy_state.py, test_wy_output.py, test_wy_grad.py, test_wy_common.py) launch one stage on it and
compare that stage's tensors with these. Shapes: B = 1, T = 16 tokens of n_h = 2 (32 interleaved positions), chunks
of 16 (two), H = 2 heads, K = 8, V = 5 (not a power of two). float64 everywhere: the kernels and the reference then
differ only by rounding in sums of ~(C + K + V) terms and the triangular inverse, so 1e-12 relative is ~10^4 u."""
from __future__ import annotations

import torch

from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.gh.reference import chunk_gh_torch
from lrnnkit.ops.gh.wy import _Ctx, _flat, _scale_tensor

DEV = "cpu" if INTERPRET else "cuda"
F64 = torch.float64
T_, NH, H, K, V, BT = 16, 2, 2, 8, 5, 16
SCALE = 0.7
TOL = 1e-12


def rel(a, b) -> float:
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    return float((a - b).norm() / b.norm())


class Case:
    """Inputs (canonical and flattened), the launch context, and the per-chunk torch reference."""

    def __init__(self, gate: bool, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.q = torch.randn(1, T_, H, K, dtype=F64, generator=g)
        self.k = torch.nn.functional.normalize(torch.randn(1, T_, NH, H, K, dtype=F64, generator=g), dim=-1)
        self.v = torch.randn(1, T_, NH, H, V, dtype=F64, generator=g)
        self.b = 2 * torch.rand(1, T_, NH, H, dtype=F64, generator=g)
        self.g = -0.6 * torch.rand(1, T_, H, dtype=F64, generator=g) if gate else None
        self.h0 = torch.randn(1, H, K, V, dtype=F64, generator=g)
        self.do = torch.randn(1, T_, H, V, dtype=F64, generator=g)
        self.dht = torch.randn(1, H, K, V, dtype=F64, generator=g)
        d = lambda x: None if x is None else x.to(DEV)  # noqa: E731
        self.c = _Ctx(d(self.q), d(self.k), d(self.v), d(self.g), None, BT)
        self.flat = _flat(d(self.q), d(self.k), d(self.v), d(self.b), d(self.g))
        self.scale_t = _scale_tensor(SCALE, F64, self.c.dev)
        self.h0d = d(self.h0)
        self._reference()

    def _reference(self):
        """Per chunk n (positions 16n .. 16n + 15): G, T = (I + A)^{-1}, the entering state S_n, U', and the
        outputs, from the equations of :mod:`lrnnkit.ops.gh.wy`'s docstring."""
        L = T_ * NH
        kf = self.k.reshape(L, H, K)
        vf = self.v.reshape(L, H, V)
        bf = self.b.reshape(L, H)
        qi = torch.zeros(T_, NH, H, K, dtype=F64)
        qi[:, NH - 1] = self.q[0] * SCALE
        qi = qi.reshape(L, H, K)
        gi = torch.zeros(T_, NH, H, dtype=F64)
        if self.g is not None:
            gi[:, 0] = self.g[0]
        gi = gi.reshape(L, H)
        self.G = torch.zeros(L, H, dtype=F64)
        self.T = torch.zeros(L, H, BT, dtype=F64)
        self.S = torch.zeros(L // BT, H, K, V, dtype=F64)
        self.Un = torch.zeros(L, H, V, dtype=F64)
        self.final = torch.zeros(1, H, K, V, dtype=F64)
        O = torch.zeros(L, H, V, dtype=F64)
        low = torch.tril(torch.ones(BT, BT, dtype=torch.bool))
        for h in range(H):
            S = self.h0[0, h].clone()
            for n in range(L // BT):
                s = slice(n * BT, (n + 1) * BT)
                Kc, Vc, Qc, bc = kf[s, h], vf[s, h], qi[s, h], bf[s, h]
                G = gi[s, h].cumsum(0)
                Gam = torch.exp((G[:, None] - G[None, :]).masked_fill(~low, 0)).masked_fill(~low, 0)
                gam = torch.exp(G)
                A = torch.tril(bc[:, None] * (Kc @ Kc.T) * Gam, -1)
                Tm = torch.linalg.inv(torch.eye(BT, dtype=F64) + A)
                Un = Tm @ (bc[:, None] * (Vc - gam[:, None] * (Kc @ S)))
                self.G[s, h], self.T[s, h], self.S[n, h], self.Un[s, h] = G, Tm, S, Un
                O[s, h] = gam[:, None] * (Qc @ S) + ((Qc @ Kc.T) * Gam) @ Un
                S = gam[-1] * S + (torch.exp(G[-1] - G)[:, None] * Kc).T @ Un
            self.final[0, h] = S
        self.O = O.reshape(T_, NH, H, V)[:, NH - 1]          # the outputs sit on each token's last position

    def autograd(self):
        """(o, final state, dq, dk, dv, dbeta, dg, dh0) of chunk_gh_torch (float64 autograd) for the loss
        <o, do> + <final, dht>."""
        xs = [None if x is None else x.clone().requires_grad_(True)
              for x in (self.q, self.k, self.v, self.b, self.g, self.h0)]
        q, k, v, b, g, h0 = xs
        o, ht = chunk_gh_torch(q, k, v, b, g, scale=SCALE, initial_state=h0, chunk_size=BT)
        ((o * self.do).sum() + (ht * self.dht).sum()).backward()
        return [o.detach(), ht.detach()] + [None if x is None else x.grad for x in xs]
