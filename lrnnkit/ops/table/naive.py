"""Naive torch reference of a compiled model layer: a symbol-indexed affine recurrence with an argmax decoder.

For a layer with symbols s_t (paper 000, eq. 1, with the input map already applied)::

    H_t = A(s_t) H_{t-1} + B(s_t),     y_t = argmax_j (W(s_t) H_t + c(s_t))_j      (first index on ties)

where ``A(s)`` is given as a dense matrix (mode "dense"), as GH factors ``G_{n} ... G_1`` with
``G = I - beta v v^T`` applied one after another (mode "gh", DeltaProduct's order), or as a diagonal (mode
"diagonal"). Sequential over t, batched over rows, any float dtype (computes in the tables' dtype widened to at
least float32).
"""
from __future__ import annotations

import torch


def table_scan_naive(sym: torch.Tensor, tables: dict, return_states: bool = False):
    """``sym`` (B, T) int; ``tables`` as built by :func:`lrnnkit.layers.compiled.layer_tables`. Returns
    ``(outputs (B, T) int64, states (B, T, d) or None)``."""
    mode = tables["mode"]
    Bt = tables["B"]
    acc = torch.float64 if Bt.dtype == torch.float64 else torch.float32
    Bt = Bt.to(acc)
    W, c = tables["W"].to(acc), tables["c"].to(acc)  # (S, n_out, d), (S, n_out)
    nb, T = sym.shape
    d = Bt.shape[1]
    h = tables["H0"].to(acc).expand(nb, d).clone()
    outs = torch.empty(nb, T, dtype=torch.int64, device=sym.device)
    states = torch.empty(nb, T, d, dtype=acc, device=sym.device) if return_states else None
    if mode == "dense":
        A = tables["A"].to(acc)
    elif mode == "gh":
        fb, fv = tables["beta"].to(acc), tables["v"].to(acc)   # (S, NF), (S, NF, d)
    else:
        a = tables["diag"].to(acc)
    for t in range(T):
        s = sym[:, t]
        if mode == "dense":
            h = torch.einsum("bij,bj->bi", A[s], h)
        elif mode == "gh":
            for f in range(fb.shape[1]):
                v = fv[s, f]
                h = h - fb[s, f, None] * v * (v * h).sum(-1, keepdim=True)
        else:
            h = a[s] * h
        h = h + Bt[s]
        sw = s if W.shape[0] > 1 else torch.zeros_like(s)
        # torch.argmax returns the first maximal index (documented), like numpy and the Triton kernel
        outs[:, t] = torch.argmax(torch.einsum("boj,bj->bo", W[sw], h) + c[sw], -1)
        if return_states:
            states[:, t] = h
    return outs, states
