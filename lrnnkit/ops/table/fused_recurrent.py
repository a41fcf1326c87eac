"""Fused recurrent Triton kernel of a compiled model layer (reference: :mod:`.naive`).

One program per batch row keeps the layer state H (width d, padded to a power of two) on chip, reads the symbol
s_t, applies ``H <- A(s_t) H + B(s_t)`` (dense matrix, GH factors one after another, or diagonal: MODE 0/1/2),
decodes ``y_t = argmax_j (W(s_t) H + c(s_t))_j`` (first maximal index, like numpy) and writes y_t only, so a
10^6-token sequence moves 8 bytes per token. The tables (a few KB for compiled models) stay in cache.
"""
from __future__ import annotations

import torch

from .._triton import TL_DTYPE, check_device, tl, triton

MODES = {"dense": 0, "gh": 1, "diagonal": 2}


@triton.jit
def _table_scan_kernel(sym_ptr, a_ptr, fb_ptr, fv_ptr, bv_ptr, w_ptr, c_ptr, h0_ptr, out_ptr, st_ptr, T,
                       w_stride, c_stride, D: tl.constexpr, NO: tl.constexpr, NF: tl.constexpr,
                       BD: tl.constexpr, BO: tl.constexpr, MODE: tl.constexpr, ACC: tl.constexpr,
                       STORE_STATES: tl.constexpr):
    i_b = tl.program_id(0)
    rd = tl.arange(0, BD)
    ro = tl.arange(0, BO)
    md = rd < D
    mo = ro < NO
    h = tl.load(h0_ptr + rd, mask=md, other=0.0).to(ACC)
    for t in range(T):
        s = tl.load(sym_ptr + i_b.to(tl.int64) * T + t).to(tl.int64)
        if MODE == 0:
            Am = tl.load(a_ptr + s * D * D + rd[:, None] * D + rd[None, :], mask=md[:, None] & md[None, :],
                         other=0.0).to(ACC)
            h = tl.sum(Am * h[None, :], 1)
        elif MODE == 1:
            for f in tl.static_range(NF):
                fb = tl.load(fb_ptr + s * NF + f).to(ACC)
                fv = tl.load(fv_ptr + (s * NF + f) * D + rd, mask=md, other=0.0).to(ACC)
                h = h - (fb * tl.sum(fv * h, 0)) * fv
        else:
            av = tl.load(a_ptr + s * D + rd, mask=md, other=0.0).to(ACC)
            h = av * h
        h = h + tl.load(bv_ptr + s * D + rd, mask=md, other=0.0).to(ACC)
        Wm = tl.load(w_ptr + s * w_stride + ro[:, None] * D + rd[None, :], mask=mo[:, None] & md[None, :],
                     other=0.0).to(ACC)
        sc = tl.sum(Wm * h[None, :], 1) + tl.load(c_ptr + s * c_stride + ro, mask=mo, other=0.0).to(ACC)
        sc = tl.where(mo, sc, float("-inf"))
        y = tl.argmax(sc, 0, tie_break_left=True)
        tl.store(out_ptr + i_b.to(tl.int64) * T + t, y.to(out_ptr.dtype.element_ty))
        if STORE_STATES:
            tl.store(st_ptr + (i_b.to(tl.int64) * T + t) * D + rd, h.to(st_ptr.dtype.element_ty), mask=md)


def table_scan_triton(sym: torch.Tensor, tables: dict, return_states: bool = False):
    """Same contract as :func:`lrnnkit.ops.table.naive.table_scan_naive`, via the Triton kernel."""
    check_device(sym, tables["B"])
    mode = tables["mode"]
    Bt = tables["B"].contiguous()
    acc = torch.float64 if Bt.dtype == torch.float64 else torch.float32
    nb, T = sym.shape
    S, d = Bt.shape
    W, c = tables["W"].contiguous(), tables["c"].contiguous()
    n_out = W.shape[1]
    w_stride = 0 if W.shape[0] == 1 else n_out * d
    c_stride = 0 if c.shape[0] == 1 else n_out
    dummy = Bt
    a = tables["A"] if mode == "dense" else (tables["diag"] if mode == "diagonal" else dummy)
    fb = tables["beta"].contiguous() if mode == "gh" else dummy
    fv = tables["v"].contiguous() if mode == "gh" else dummy
    NF = fb.shape[1] if mode == "gh" else 1
    sym32 = sym.to(torch.int32).contiguous()
    out = torch.empty(nb, T, dtype=torch.int32, device=sym.device)
    st = torch.empty(nb, T, d, dtype=acc, device=sym.device) if return_states else out
    BD = max(2, triton.next_power_of_2(d))
    BO = max(2, triton.next_power_of_2(n_out))
    if nb and T:
        _table_scan_kernel[(nb,)](sym32, a.contiguous(), fb, fv, Bt, W, c, tables["H0"].contiguous(), out, st, T,
                                  w_stride, c_stride, d, n_out, NF, BD, BO, MODES[mode], TL_DTYPE[acc],
                                  return_states, num_warps=1 if BD * max(BD, BO) <= 1024 else 4)
    return out.to(torch.int64), (st if return_states else None)
