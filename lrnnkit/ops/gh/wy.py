"""Trainable chunked GH-product layer in Triton: WY forward and backward, optional gate, packed variable lengths.

Math (paper 001, DeltaProduct, run by interleaving: a token's n_h (k, v, b) triples are n_h consecutive positions;
the gate g_t sits on the first, the query on the last; :mod:`.reference` states the recurrence). In a chunk of C
positions (S_0 the state entering it, G the in-chunk cumulative sum of g, gamma = exp(G), Gamma_ij = exp(G_i - G_j)
for i >= j, 0 above; q already multiplied by the output scale)::

    A  = strictly_lower(diag(b) K K^T * Gamma),    T = (I + A)^{-1}
    W  = T diag(b gamma) K,   U = T diag(b) V,     U' = U - W S_0
    O  = diag(gamma) Q S_0 + M U',                 M = (Q K^T) * Gamma   (lower triangle incl. diagonal)
    S_C = gamma_C S_0 + Kd^T U',                   Kd = diag(exp(G_C - G)) K

(proof: with P_i = exp(g_i) S_{i-1} the step is S_i = P_i + k_i u'_i^T, u'_i = b_i (v_i - P_i^T k_i); expanding P_i
by induction gives (I + A) U' = diag(b) V - diag(b gamma) K S_0.) Backward, derived by hand from these equations
(dS = the gradient of S_C; a reverse pass over the chunks carries it)::

    dU' = M^T dO + Kd dS;     dS_0 = gamma_C dS + (diag(gamma) Q)^T dO - W^T dU'
    D   = (dO U'^T) * Gamma (lower incl. diagonal)
    dQ  = diag(gamma) dO S_0^T + D K;     dK = D^T Q + diag(exp(G_C - G)) U' dS^T + (WY part)
    dW  = -dU' S_0^T,   dU = dU'
    WY part: X = diag(b gamma) K, Y = diag(b) V:  dX = T^T dW = -dY S_0^T, dY = T^T dU, dT = dW X^T + dU Y^T,
             dA = -strictly_lower(T^T dT T^T) = -strictly_lower((dX X^T + dY Y^T) T^T),  P = dA * Gamma:
             dK += diag(b gamma) dX + diag(b) P K + P^T diag(b) K,   dV = diag(b) dY,
             db = rowsum(gamma K * dX) + rowsum(V * dY) + rowsum(P * K K^T)
    gate: dG_i (w.r.t. the cumulative G_i) collects q_i . (gamma_i S_0 dO_i), rowsum - colsum of D * Q K^T and of
          dA * A, b_i gamma_i k_i . dX_i, -F_i with F_j = exp(G_C - G_j) k_j^T dS u'_j, and at the chunk's last
          position gamma_C <dS, S_0> + sum_j F_j;   dg = reverse in-chunk cumulative sum of dG.

Kernels (all Triton; one launch each, none loops over chunks in Python). fla 0.6.0 (``ops/gated_delta_rule``,
``ops/common/chunk_delta_h.py``) was read for the layout -- per-chunk states from a sequential pass, a reverse dS
pass, a chunk-parallel dq/dk/dw kernel and a WY backward kernel; the equations and code are ours, and unlike fla
W and U are never formed in memory: the state passes rebuild U' and W^T dU' from T::

    U' = U - W S_0 = T diag(b) (V - diag(gamma) K S_0),        W^T dU' = K^T diag(b gamma) (T^T dU')

1. :func:`.wy_t._t_kernel` (chunk-parallel): G, A and T (the blocked inverse, :func:`.tiles._tinv`), T stored
   (C numbers per position, as fla keeps its A) for the state passes and the backward.
2. :func:`.wy_state._state_fwd_kernel` (one program per sequence, head and value block; sequential over the
   chunks): the outputs (the one-pass forward, 2-byte inputs) or the chunk states S_n and U' (the split forward,
   and the backward, which recomputes them unless ``keep_states`` lets it take the split forward's; nothing of
   size T x K x V).
3. :func:`.wy_output._output_kernel` (chunk-parallel, the split forward of float32 / float64): O from S_n and U'.
   Moving the two output products out of the sequential pass is what float32 needs: its 8-warp one-pass state
   kernel spilled registers and was slower than the two split kernels together (benchmarks/RESULTS.md, "kernels").
4. :func:`.wy_state._state_bwd_kernel` (reverse): dS_{n+1} per chunk, dU', dv, dS_0 (the initial state's
   gradient). It stores dY = T^T dU' (which it forms anyway for W^T dU'), not dU': the later kernels then need no
   product with T but one (an H100 measurement of the change: benchmarks/RESULTS.md, "kernels", record E). With
   2-byte inputs it also writes dv = diag(b) dY from the unrounded dY; float32 / float64 dv comes from the WY
   backward.
5. :func:`.wy_grad._dqkwg_kernel` (chunk-parallel): dq, the non-WY part of dk, dX, dG's first part.
6. :func:`.wy_grad._wy_bwd_kernel` (chunk-parallel, the key width in blocks of ``wy_bk``): the WY backward, dk,
   dbeta, dg (and dv for float32 / float64 inputs).

Stages 5 and 6 also run as one: :func:`.wy_grad._dqk_wy_kernel` (chunk-parallel) does both in one launch, so dX and
the non-WY part of dk are not written and read back as separate tensors; the table's ``fuse`` (no gate) /
``fuse_gated`` entries pick it: faster for bf16 without a gate, slower with a gate and for float32, where it spills
(RESULTS.md "kernels", record F). The table's ``once`` runs the fused stage as :func:`.wy_grad._dqk_wy_once_kernel`
instead: the whole key width in one block, each tile read once, dk's partial sum kept in registers.

The modules, by stage (each kernel beside the host function that launches it): :mod:`.wy_t` (1),
:mod:`.wy_state` (2, 4), :mod:`.wy_output` (3), :mod:`.wy_grad` (5, 6, 5+6); the jit helpers they share are in
:mod:`.wy_common`, every kernel setting (tables, float32 mode, chunk size, padded widths) in :mod:`.wy_config`.
This module is the host side that runs the stages in order (:func:`_fwd`, :func:`_bwd`; every launcher takes the
call's shapes, tables and launch constants as one :class:`_Ctx`), the autograd Function and :func:`chunk_gh_triton`.

Precision: bf16/fp16 inputs use tensor-core dots on operands rounded to the input dtype with float32 accumulation
(as fla); the stored intermediates T, S_n, U', dS_n, dY, dX are in the input dtype (as fla), the gradients are
written in the inputs' dtypes directly. float32 inputs use float32 intermediates and, by default, tf32 tensor-core
dots with the 3xTF32 split (``wy_config.FP32_PRECISION = "tf32x3"``: each operand a = a_hi + a_lo in tf32, three
products; about fp32 accuracy); ``"tf32"`` is one pass on operands rounded to tf32 to nearest (errors ~1e-3 against
~6e-3 for bf16). float64 uses IEEE float64 dots (for checking). Triton 3.6 also offers bf16x3 / bf16x6 splits:
compiled on an H100 they gave wrong dk/dv/dbeta here, so they are not offered; nor is a hand-written bf16
three-product split (tried: the state passes ran no faster than one-pass tf32, so the float32 cost is not in the
products, and triton 3.6 returned NaN dk in the WY backward and faulted in the reverse state pass with 32-wide
value blocks; benchmarks/RESULTS.md, "kernels"). Head widths 17..32 in 2-byte dtypes
run zero-padded to 64 (:func:`.wy_config._padded`: a miscompile at width 32).
Variable lengths (``cu_seqlens``): chunks never straddle a sequence; without it the B rows are B sequences.
"""
from __future__ import annotations

import torch

from .._triton import INTERPRET, TL_DTYPE, check_device, triton
from .wy_config import (CONFIG, CONFIG_F32, CONFIG_TF32, CONFIG_WIDE, FP32_MODES, _config, _padded, _settings,
                        config_table, default_chunk, fp32_mode)
from .wy_grad import _dqk_wy_once_pass, _dqk_wy_pass, _dqkwg_pass, _wy_bwd_pass
from .wy_output import _output_pass
from .wy_state import _state_bwd_pass, _state_pass
from .wy_t import _t_pass
from . import wy_tuned
from ...errors import InputError

_CACHE: dict = {}


def _tables(cu: tuple, nh: int, BT: int, device):
    """chunks (NT, 2) [start, end) over interleaved positions; seqs (N, 3) (bos, eos, first chunk index).
    Cached per (lengths, n_h, chunk, device): rebuilding and copying them each call costs host time that the GPU
    would wait for."""
    key = ("tables", cu, nh, BT, str(device))
    if key in _CACHE:
        return _CACHE[key]
    if len(_CACHE) > 256:
        _CACHE.clear()
    chunks, seqs = [], []
    for a, b in zip(cu[:-1], cu[1:]):
        a, b = a * nh, b * nh
        seqs.append((a, b, len(chunks)))
        chunks.extend((s, min(s + BT, b)) for s in range(a, b, BT))
    ch = torch.tensor(chunks if chunks else [(0, 0)], dtype=torch.int32).to(device)
    sq = torch.tensor(seqs, dtype=torch.int32).to(device)
    _CACHE[key] = (ch, sq, len(chunks))
    return _CACHE[key]


def _scale_tensor(scale: float, dtype, device):
    """The output scale as a one-element tensor (Triton passes Python floats as fp32; float64 needs more)."""
    key = ("scale", scale, dtype, str(device))
    if key not in _CACHE:
        _CACHE[key] = torch.tensor([scale], dtype=dtype, device=device)
    return _CACHE[key]


class _Ctx:
    """Shapes, tables and launch constants of one call (flattened: B rows become B sequences)."""

    def __init__(self, q, k, v, g, cu_seqlens, BT, fp32_precision=None, keep_states=None):
        B, T, H, K = q.shape
        NH, V = k.shape[2], v.shape[-1]
        self.H, self.K, self.V, self.NH, self.BT = H, K, V, NH, BT
        self.Ltok = B * T
        cu = tuple(int(x) for x in cu_seqlens.tolist()) if cu_seqlens is not None else \
            tuple(i * T for i in range(B + 1))
        self.N = len(cu) - 1
        self.chunks, self.seqs, self.NT = _tables(cu, NH, BT, q.device)
        self.DT, self.ACC, self.PREC, self.ST = _config(q.dtype, fp32_precision)
        self.EMU = INTERPRET and self.DT != self.ACC
        self.RND = self.PREC == "tf32" and self.DT == torch.float32 and not INTERPRET   # one-pass tf32 of fp32
        self.BK = max(16, triton.next_power_of_2(K))
        self.BVF = max(16, triton.next_power_of_2(V))
        self.BLOCKED = self.ACC != torch.float64   # the blocked inverse (tiles._tinv); BT is 16, 32 or 64
        self.has_g = g is not None
        self.dev = q.device
        self.cfg = config_table(q.dtype, fp32_precision, K, V, q.device)   # with the tuned entry, if any
        self.keep = bool(self.cfg["keep"] if keep_states is None else keep_states)
        self.split = bool(self.cfg["split"]) or self.keep   # kept states come from the split forward

    def consts(self):
        return (self.H, self.K, self.V, self.NH, self.BT)

    def types(self):
        return (TL_DTYPE[self.DT], TL_DTYPE[self.ACC], self.PREC, self.EMU, self.RND)

    def bv(self, which):
        """(value block, warps, stages) of a kernel: :func:`.wy_config._settings` of this call's table."""
        return _settings(self.cfg, which, self.DT != self.ACC, self.BVF)


def _flat(q, k, v, beta, g):
    H, K = q.shape[2], q.shape[3]
    V = v.shape[-1]
    f = lambda x, w: x.contiguous().reshape(-1, H, w)  # noqa: E731
    return (f(q, K), f(k, K), f(v, V), beta.contiguous().reshape(-1, H),
            g.contiguous().reshape(-1, H) if g is not None else None)


def _fwd(c, qf, kf, vf, bf, gf, h0, scale_t):
    """Forward: (o, final state, T, G, S_n, U'); T and G are what the backward keeps. ``c.split`` (the table's
    ``split`` entry, or kept states) picks the split forward (a state pass that stores S_n and U', then
    :func:`_output_kernel`) over the one-pass one (outputs inside the state pass; S_n and U' are then None)."""
    Gc, tm = _t_pass(c, kf, bf, gf)
    if c.split:
        _, ht, h, vn = _state_pass(c, qf, kf, vf, bf, tm, Gc, h0, scale_t, False, True, True)
        return _output_pass(c, qf, kf, Gc, h, vn, scale_t), ht, tm, Gc, h, vn
    o, ht, _, _ = _state_pass(c, qf, kf, vf, bf, tm, Gc, h0, scale_t, True, False, True)
    return o, ht, tm, Gc, None, None


def _bwd(c, qf, kf, vf, bf, h0, scale_t, do, dht, tm, Gc, out_dtypes, h=None, vn=None):
    """Gradients (dq, dk, dv, dbeta, dg, dh0); the chunk states and U' are recomputed (from T and G kept by the
    forward) unless given (``h``, ``vn``: kept by a split forward); dq, dk, dv, dbeta are written in ``out_dtypes``
    directly (no float32 copies to cast afterwards)."""
    if h is None:
        _, _, h, vn = _state_pass(c, qf, kf, vf, bf, tm, Gc, h0, scale_t, False, True, False)
    L = kf.shape[0]
    tq, tk, tv, tb = out_dtypes
    dv = torch.empty(L, c.H, c.V, dtype=tv, device=c.dev)
    dof = do.contiguous().reshape(-1, c.H, c.V)
    fuse = bool(c.cfg["fuse_gated" if c.has_g else "fuse"])
    dv_rev = c.DT != c.ACC   # 2-byte inputs: dv from the unrounded dY (see _state_bwd_kernel); else a later kernel
    dh, dy, dh0 = _state_bwd_pass(c, qf, kf, bf, tm, Gc, dof, dht, h, vn, dv, dv_rev, scale_t)
    dq = torch.empty(c.Ltok, c.H, c.K, dtype=tq, device=c.dev)   # every token row is written
    dk = torch.empty(L, c.H, c.K, dtype=tk, device=c.dev)
    db = torch.empty(L, c.H, dtype=tb, device=c.dev)
    dg = torch.empty(c.Ltok, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None   # every token's first position
    if fuse and c.cfg["once"]:   # every tile read once, no dk scratch
        _dqk_wy_once_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dk, dv, db, dg, scale_t, not dv_rev)
        return dq, dk, dv, db, dg, dh0
    # dk's partial sum (everything but the WY terms) in float32: the float32 dk itself (each program reads its rows
    # back before it overwrites them), a scratch for 2-byte dk
    dkp = dk if dk.dtype == c.ACC else torch.empty(L, c.H, c.K, dtype=c.ACC, device=c.dev)
    if fuse:
        _dqk_wy_pass(c, qf, kf, vf, bf, Gc, tm, h, dh, vn, dy, dof, dq, dkp, dk, dv, db, dg, scale_t, not dv_rev)
        return dq, dk, dv, db, dg, dh0
    dx, dGp, NKB = _dqkwg_pass(c, qf, kf, Gc, h, dh, vn, dy, dof, dq, dkp, scale_t)
    del h, dh, vn
    _wy_bwd_pass(c, kf, vf, bf, Gc, tm, dx, dy, dkp, dGp, NKB, dk, dv, db, dg, not dv_rev)
    return dq, dk, dv, db, dg, dh0


class ChunkGHFunction(torch.autograd.Function):
    """Forward: :func:`_fwd` (keeps T and G when gradients are needed, and S_n and U' of the split forward when
    ``keep_states``, or the table's ``keep`` if that is None, says so); backward: :func:`_bwd` (recomputes the
    chunk states and U' otherwise)."""

    @staticmethod
    def forward(ctx, q, k, v, beta, g, h0, scale, cu_seqlens, chunk_size, fp32_precision, keep_states):
        grad = any(ctx.needs_input_grad[:6])
        # kept states serve only a backward: without one, the forward the table picks
        c = _Ctx(q, k, v, g, cu_seqlens, chunk_size, fp32_precision, keep_states if grad else False)
        scale_t = _scale_tensor(scale, c.ACC, q.device)
        qf, kf, vf, bf, gf = _flat(q, k, v, beta, g)
        h0c = h0.contiguous() if h0 is not None else None
        o, ht, tm, Gc, h, vn = _fwd(c, qf, kf, vf, bf, gf, h0c, scale_t)
        if grad:   # c.keep implies the split forward, so h and vn exist when kept
            ctx.save_for_backward(q, k, v, beta, g, h0, scale_t, tm, Gc, h if c.keep else None,
                                  vn if c.keep else None)
        ctx.c = c
        return o.reshape(q.shape[:3] + (v.shape[-1],)), ht

    @staticmethod
    def backward(ctx, do, dht):
        q, k, v, beta, g, h0, scale_t, tm, Gc, h, vn = ctx.saved_tensors
        c = ctx.c
        qf, kf, vf, bf, _ = _flat(q, k, v, beta, None)
        h0c = h0.contiguous() if h0 is not None else None
        dq, dk, dv, db, dg, dh0 = _bwd(c, qf, kf, vf, bf, h0c, scale_t, do.to(q.dtype), dht, tm, Gc,
                                       (q.dtype, k.dtype, v.dtype, beta.dtype), h, vn)
        cast = lambda d, x: None if x is None else d.reshape(x.shape).to(x.dtype)  # noqa: E731  (a no-op but dg, dh0)
        return (cast(dq, q), cast(dk, k), cast(dv, v), cast(db, beta), cast(dg, g) if g is not None else None,
                cast(dh0, h0), None, None, None, None, None)


def chunk_gh_triton(q, k, v, beta, g, scale, h0, cu_seqlens, chunk_size, fp32_precision=None, keep_states=None):
    """Canonical inputs (see :func:`lrnnkit.ops.gh.api.canonical`) -> ``(o, final_state)``, differentiable.
    ``chunk_size`` None: :func:`default_chunk` at the widths the kernels run at. ``fp32_precision`` (float32
    inputs): one of FP32_MODES, default the module's FP32_PRECISION. ``keep_states``:
    :func:`lrnnkit.ops.gh.api.chunk_gh`."""
    check_device(q, k, v, beta, g, h0)
    fp32_mode(fp32_precision)   # a bad mode is refused before any padding or launch
    if chunk_size is not None and chunk_size not in wy_tuned.CHUNKS:
        raise InputError(f"chunk_size must be one of {', '.join(map(str, wy_tuned.CHUNKS))}, got {chunk_size}")
    K, V = q.shape[-1], v.shape[-1]
    pk, pv = _padded(K, V, q.dtype)
    if chunk_size is None:   # the widths the kernels run at pick the tuned entry, as they pick its tiles
        chunk_size = default_chunk(q.dtype, fp32_precision, pk, pv, q.device)
    if (pk, pv) == (K, V):
        return ChunkGHFunction.apply(q, k, v, beta, g, h0, float(scale), cu_seqlens, chunk_size, fp32_precision,
                                     keep_states)
    # zero columns: keys stay unit vectors, the padded state rows / columns stay zero and get no gradient back
    pad = torch.nn.functional.pad
    o, ht = ChunkGHFunction.apply(pad(q, (0, pk - K)), pad(k, (0, pk - K)), pad(v, (0, pv - V)), beta, g,
                                  None if h0 is None else pad(h0, (0, pv - V, 0, pk - K)), float(scale), cu_seqlens,
                                  chunk_size, fp32_precision, keep_states)
    return o[..., :V], ht[..., :K, :V]


__all__ = ["chunk_gh_triton", "ChunkGHFunction", "default_chunk", "fp32_mode", "config_table", "FP32_MODES", "CONFIG",
           "CONFIG_WIDE", "CONFIG_TF32", "CONFIG_F32"]
