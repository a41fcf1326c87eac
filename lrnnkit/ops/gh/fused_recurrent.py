"""Fused recurrent Triton kernel of the GH-product layer (DeltaNet n_h = 1, DeltaProduct n_h > 1).

One program per (batch, head, block of BV value columns) keeps its K x BV slice of the state S on chip (registers,
accumulated in float32, or float64 for float64 inputs) and walks the sequence, applying per token the optional gate
``S <- exp(g_t) S`` and then the n_h steps ``S <- S + beta_j k_j (v_j - S^T k_j)^T`` (= ``(I - beta_j k_j k_j^T) S
+ beta_j k_j v_j^T``, paper 001), and writes ``o_t = scale * S^T q_t``. Columns of S evolve independently, so
splitting V over programs is exact. Packed sequences (``cu_seqlens``, B = 1) get one program row each, with their
own initial and final state: one launch decodes a whole batch one token at a time (the layer's decode step). For
inference and the small widths of compiled models (no backward: use :func:`lrnnkit.ops.gh.chunk_gh` for
training). Reference: :func:`lrnnkit.ops.gh.naive.delta_product_naive`.

:func:`fused_recurrent_gated_delta_rule` takes fla 0.6.0's decode-path signature (fla's
``fused_recurrent_gated_delta_rule``, through which fla's ``GatedDeltaProduct`` decodes: the n_h Householder steps
of a token as n_h interleaved sub-steps, the gate on the first, the query on the last) and runs this kernel with
n_h = 1 over the interleaved sequence, which is the same recurrence.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...errors import InputError
from .._checks import acc_dtype, check_gh
from .._triton import TL_DTYPE, check_device, tl, triton
from ..l2norm import l2norm
from .inputs import prepare


@triton.jit
def _gh_fused_recurrent_kernel(q_ptr, k_ptr, v_ptr, b_ptr, g_ptr, h0_ptr, o_ptr, ht_ptr, scale_ptr, cu_ptr,
                               alog_ptr, dtb_ptr,
                               T, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH: tl.constexpr,
                               BK: tl.constexpr, BV: tl.constexpr, ACC: tl.constexpr,
                               HAS_G: tl.constexpr, HAS_H0: tl.constexpr, STORE_HT: tl.constexpr,
                               IS_VARLEN: tl.constexpr, NORM_QK: tl.constexpr, BETA_SIG: tl.constexpr,
                               GATE_RAW: tl.constexpr):
    # NORM_QK: q, k <- x / sqrt(||x||^2 + 1e-6) here (fla's l2norm); BETA_SIG > 0: beta <- BETA_SIG * sigmoid(b);
    # GATE_RAW: g <- -exp(A_log_h) softplus(a + dt_bias_h) (softplus(x) = x above 20, as torch's)
    i_v = tl.program_id(0)
    i_nh = tl.program_id(1)
    i_n = i_nh // H                    # the sequence (a batch row, or a packed sequence of cu_seqlens)
    i_h = i_nh % H
    if IS_VARLEN:
        bos = tl.load(cu_ptr + i_n).to(tl.int64)
        T = (tl.load(cu_ptr + i_n + 1) - bos).to(tl.int32)
    else:
        bos = i_n.to(tl.int64) * T
    rk = tl.arange(0, BK)
    rv = i_v * BV + tl.arange(0, BV)
    mk = rk < K
    mv = rv < V
    mkv = mk[:, None] & mv[None, :]
    scale = tl.load(scale_ptr).to(ACC)   # a tensor, not a float argument: Triton passes floats as fp32
    if HAS_H0:
        S = tl.load(h0_ptr + ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :], mask=mkv, other=0.0).to(ACC)
    else:
        S = tl.zeros([BK, BV], dtype=ACC)
    for t in range(T):
        tok = bos + t
        if HAS_G:
            gt = tl.load(g_ptr + tok * H + i_h).to(ACC)
            if GATE_RAW:
                gt = gt + tl.load(dtb_ptr + i_h).to(ACC)
                gt = -tl.exp(tl.load(alog_ptr + i_h).to(ACC)) * tl.where(gt > 20.0, gt,
                                                                         tl.log(1.0 + tl.exp(tl.minimum(gt, 20.0))))
            S = S * tl.exp(gt)
        for j in tl.static_range(NH):
            row = (tok * NH + j) * H + i_h
            kj = tl.load(k_ptr + row * K + rk, mask=mk, other=0.0).to(ACC)
            if NORM_QK:
                kj = kj / tl.sqrt(tl.sum(kj * kj) + 1e-6)
            vj = tl.load(v_ptr + row * V + rv, mask=mv, other=0.0).to(ACC)
            bj = tl.load(b_ptr + row).to(ACC)
            if BETA_SIG > 0:
                bj = BETA_SIG * tl.sigmoid(bj)
            kS = tl.sum(kj[:, None] * S, 0)
            S = S + (bj * kj)[:, None] * (vj - kS)[None, :]
        qt = tl.load(q_ptr + (tok * H + i_h) * K + rk, mask=mk, other=0.0).to(ACC)
        if NORM_QK:
            qt = qt / tl.sqrt(tl.sum(qt * qt) + 1e-6)
        ot = tl.sum(qt[:, None] * S, 0) * scale
        tl.store(o_ptr + (tok * H + i_h) * V + rv, ot.to(o_ptr.dtype.element_ty), mask=mv)
    if STORE_HT:
        tl.store(ht_ptr + ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :], S.to(ht_ptr.dtype.element_ty),
                 mask=mkv)


_SCALES: dict = {}


def _scale_tensor(scale: float, dtype, device) -> torch.Tensor:
    """The scale as a one-element device tensor, made once per (value, dtype, device): a decode step would
    otherwise copy it from the host at every launch."""
    key = (scale, dtype, str(device))
    if key not in _SCALES:
        if len(_SCALES) > 64:
            _SCALES.clear()
        _SCALES[key] = torch.tensor([scale], dtype=dtype, device=device)
    return _SCALES[key]


def _n_seq(where: str, cu_seqlens, B: int, T: int) -> int:
    """The number of sequences: B, or len(cu_seqlens) - 1 for packed inputs (B = 1, rising from 0 to T; a
    sequence may be empty: its state passes through)."""
    if cu_seqlens is None:
        return B
    if B != 1:
        raise InputError(f"{where}: cu_seqlens needs packed inputs with B = 1, got B = {B}")
    cu = cu_seqlens.tolist()
    if len(cu) < 2 or cu[0] != 0 or cu[-1] != T or any(b < a for a, b in zip(cu, cu[1:])):
        raise InputError(f"{where}: cu_seqlens must rise from 0 to T = {T}, got {cu[:8]}{'...' if len(cu) > 8 else ''}")
    return len(cu) - 1


def fused_recurrent_delta_product(q, k, v, beta, g=None, *, scale: float | None = None, initial_state=None,
                                  output_final_state: bool = False, normalize: bool = False,
                                  validate: bool = True, block_v: int | None = None, num_warps: int | None = None,
                                  cu_seqlens=None, n_seq: int | None = None, raw: dict | None = None):
    """Same contract as :func:`lrnnkit.ops.gh.naive.delta_product_naive` (returns ``(o, final_state)``),
    computed by the fused recurrent Triton kernel (``scale`` defaults to ``K ** -0.5``). ``cu_seqlens`` (B = 1)
    packs N sequences: ``initial_state`` and the final state are then (N, H, K, V). ``n_seq`` (trusted callers,
    with ``validate=False``): N given, so the boundaries are not read on the host. ``beta`` and ``g`` may be
    float32 for lower-precision q, k, v (read in the accumulation dtype). ``raw`` (trusted callers, the layer's
    decode path, with ``validate=False``): the layer's last steps done inside the kernel, in the accumulation dtype
    -- ``{"qk_l2norm": True}`` normalizes q and k (x / sqrt(||x||^2 + 1e-6)), ``{"beta_sigmoid": c}`` takes beta as
    c * sigmoid(beta), ``{"A_log": A, "dt_bias": d}`` takes g as -exp(A) softplus(g + d) per head. Not
    differentiable (raises if an input requires grad)."""
    N = None                              # a q of the wrong shape is refused by prepare
    if n_seq is not None and not validate:
        N = n_seq
    elif isinstance(q, torch.Tensor) and q.ndim == 4:
        N = _n_seq("fused_recurrent_delta_product", cu_seqlens, q.shape[0], q.shape[1])
    x = prepare(q, k, v, beta, g, initial_state, normalize=normalize, validate=validate, n_seq=N)
    if any(t is not None and t.requires_grad for t in (x.q, x.k, x.v, x.beta, x.g, x.h0)) and torch.is_grad_enabled():
        raise InputError("fused_recurrent_delta_product has no backward; train with chunk_gh or DeltaProductLayer")
    check_device(x.q, x.k, x.v, x.beta, x.g, x.h0, cu_seqlens)
    B, T, H, K, V = x.dims
    scale = K ** -0.5 if scale is None else scale
    acc = acc_dtype(q.dtype)
    BK = triton.next_power_of_2(K)
    # H200 sweep (benchmarks/bench_kernels.py): many small programs of one warp win; BV = 16 at K = 128, 8 at K = 16
    BV = block_v or min(triton.next_power_of_2(V), 16 if BK >= 64 else 8)
    qc, kc, vc = x.q.contiguous(), x.k.contiguous(), x.v.contiguous()
    bc = x.beta.contiguous()
    gc = x.g.contiguous() if x.g is not None else qc
    h0 = x.h0.contiguous() if x.h0 is not None else qc
    cu = cu_seqlens.contiguous() if cu_seqlens is not None else qc
    o = torch.empty(B, T, H, V, dtype=q.dtype, device=q.device)
    ht = torch.empty(N, H, K, V, dtype=acc, device=q.device) if output_final_state else o
    grid = (triton.cdiv(V, BV), N * H)
    sc = _scale_tensor(float(scale), acc, q.device)
    nw = num_warps or (1 if BK * BV <= 2048 else 2 if BK * BV <= 4096 else 4 if BK * BV <= 8192 else 8)
    if N and T:
        raw = raw or {}
        alog, dtb = raw.get("A_log"), raw.get("dt_bias")
        if (alog is None) != (dtb is None) or (alog is not None and x.g is None):
            raise InputError("fused_recurrent_delta_product: raw gate needs g, A_log and dt_bias together")
        _gh_fused_recurrent_kernel[grid](qc, kc, vc, bc, gc, h0, o, ht, sc, cu,
                                         qc if alog is None else alog, qc if dtb is None else dtb,
                                         T, H, K, V, x.n_h, BK, BV,
                                         TL_DTYPE[acc], x.g is not None, x.h0 is not None, output_final_state,
                                         cu_seqlens is not None, bool(raw.get("qk_l2norm")),
                                         float(raw.get("beta_sigmoid", 0)), alog is not None, num_warps=nw)
    elif output_final_state:   # nothing to run: the state passes through
        ht.copy_(x.h0 if x.h0 is not None else torch.zeros_like(ht))
    return o, (ht if output_final_state else None)


def fused_recurrent_gated_delta_rule(q, k, v, g=None, gk=None, gv=None, beta=None, scale: float | None = None,
                                     initial_state=None, output_final_state: bool = False,
                                     use_qk_l2norm_in_kernel: bool = False, use_gate_in_kernel: bool = False,
                                     A_log=None, dt_bias=None, use_beta_sigmoid_in_kernel: bool = False,
                                     allow_neg_eigval: bool = False, state_v_first: bool = False, cu_seqlens=None,
                                     *, validate: bool = True):
    """fla 0.6.0's ``fused_recurrent_gated_delta_rule`` signature and defaults over lrnnkit's kernel (n_h = 1 per
    row; fla's ``GatedDeltaProduct`` decodes DeltaProduct by passing the n_h steps of each token as n_h rows, the
    gate on the first and the query on the last, and keeping every n_h-th output). Per row t, with key head
    ``h_k = h // (HV / H)``::

        S <- exp(g_t) S;  S <- (I - beta_t k_t k_t^T) S + beta_t k_t v_t^T;  o_t = scale S^T q_t

    q, k (B, T, H, K); v (B, T, HV, V) (HV a multiple of H); g (B, T, HV) log-decays (with
    ``use_gate_in_kernel``: raw, ``g <- -exp(A_log) softplus(g + dt_bias)``); beta (B, T, HV) (with
    ``use_beta_sigmoid_in_kernel``: raw, ``beta <- sigmoid(beta)``, times 2 with ``allow_neg_eigval``);
    ``initial_state`` (N, HV, K, V), or (N, HV, V, K) with ``state_v_first``; ``scale`` defaults to
    ``K ** -0.5``. Returns ``(o (B, T, HV, V) in v's dtype, final_state float32 or None)`` in fla's layout.

    Refused, one line each: ``gk`` / ``gv`` (per-channel decays: not a GH product, no GH kernel computes them),
    per-channel beta (B, T, HV, V) (the same), ``allow_neg_eigval`` without ``use_beta_sigmoid_in_kernel`` (fla
    refuses it too). lrnnkit's extra keyword ``validate`` (default on) checks unit keys (after the optional
    normalization), ``beta in [0, 2]`` and ``g <= 0``: the GH factors must be contractions (paper 000, Theorem 1's
    eigenvalue range), which fla does not check."""
    where = "fused_recurrent_gated_delta_rule"
    if gk is not None or gv is not None:
        raise InputError(f"{where}: gk / gv (per-channel decays) are not a generalized Householder product; "
                         "lrnnkit's kernel takes the scalar gate g only")
    if beta is None:
        raise InputError(f"{where}: beta is required")
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise InputError(f"{where}: allow_neg_eigval=True requires use_beta_sigmoid_in_kernel=True (as in fla)")
    for name, x in (("q", q), ("k", k), ("v", v), ("beta", beta)):
        if not isinstance(x, torch.Tensor):
            raise InputError(f"{where}: {name} must be a torch.Tensor, got {type(x).__name__}")
    if q.ndim != 4 or k.shape != q.shape or v.ndim != 4 or v.shape[:2] != q.shape[:2]:
        raise InputError(f"{where}: expected q, k (B, T, H, K) and v (B, T, HV, V), got q {tuple(q.shape)}, "
                         f"k {tuple(k.shape)}, v {tuple(v.shape)}")
    B, T, H, K = q.shape
    HV = v.shape[2]
    if HV % H:
        raise InputError(f"{where}: HV = {HV} value heads must be a multiple of H = {H} key heads")
    if beta.shape != (B, T, HV):
        raise InputError(f"{where}: beta must be head-wise (B, T, HV) = {(B, T, HV)}, got {tuple(beta.shape)} "
                         "(per-channel beta is not a Householder step)")
    if use_gate_in_kernel and (A_log is None or g is None):
        raise InputError(f"{where}: use_gate_in_kernel=True needs g (raw) and A_log")
    out_dtype = v.dtype
    if use_qk_l2norm_in_kernel:   # fla normalizes in float32 inside its kernel; so do we, before ours
        up = torch.float64 if v.dtype == torch.float64 else torch.float32
        q, k, v = l2norm(q.to(up)), l2norm(k.to(up)), v.to(up)
    if HV > H:
        q, k = q.repeat_interleave(HV // H, dim=2), k.repeat_interleave(HV // H, dim=2)
    beta = beta.float() if beta.dtype != torch.float64 else beta
    if use_beta_sigmoid_in_kernel:
        beta = torch.sigmoid(beta) * (2 if allow_neg_eigval else 1)
    if g is not None:
        g = g.float() if g.dtype != torch.float64 else g
        if use_gate_in_kernel:
            a = g + (0 if dt_bias is None else dt_bias.to(g.dtype))
            g = -A_log.to(g.dtype).exp() * F.softplus(a)
    h0 = initial_state
    if h0 is not None and state_v_first:
        h0 = h0.transpose(-1, -2)
    if q.dtype != v.dtype:
        q, k = q.to(v.dtype), k.to(v.dtype)
    if validate:   # fla's in-kernel normalization leaves norms just under 1 (its eps): contractions still
        check_gh(q, k, v, beta, g, h0, unit_keys=not use_qk_l2norm_in_kernel)
    o, ht = fused_recurrent_delta_product(q, k, v, beta, g, scale=scale, initial_state=h0,
                                          output_final_state=output_final_state, validate=False,
                                          cu_seqlens=cu_seqlens)
    if ht is not None:
        ht = ht.float() if ht.dtype != torch.float64 else ht
        if state_v_first:
            ht = ht.transpose(-1, -2).contiguous()
    return o.to(out_dtype), ht
