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

1. :func:`_t_kernel` (chunk-parallel): G, A and T (the blocked inverse, :func:`.tiles._tinv`), T stored (C numbers per
   position, as fla keeps its A) for the state passes and the backward.
2. :func:`_state_fwd_kernel` (one program per sequence, head and value block; sequential over the chunks): the
   outputs (the one-pass forward, 2-byte inputs) or the chunk states S_n and U' (the split forward, and the
   backward, which recomputes them unless ``keep_states`` lets it take the split forward's; nothing of size
   T x K x V).
3. :func:`_output_kernel` (chunk-parallel, the split forward of float32 / float64): O from S_n and U'. Moving the
   two output products out of the sequential pass is what float32 needs: its 8-warp one-pass state kernel spilled
   registers and was slower than the two split kernels together (benchmarks/RESULTS.md, "kernels").
4. :func:`_state_bwd_kernel` (reverse): dS_{n+1} per chunk, dU', dv, dS_0 (the initial state's gradient).
   It stores dY = T^T dU' (which it forms anyway for W^T dU'), not dU': the later kernels then need no product
   with T but one (an H100 measurement of the change: benchmarks/RESULTS.md, "kernels", fifth round). With 2-byte
   inputs it also writes dv = diag(b) dY from the unrounded dY; float32 / float64 dv comes from the WY backward.
5. :func:`_dqkwg_kernel` (chunk-parallel): dq, the non-WY part of dk, dX, dG's first part.
6. :func:`_wy_bwd_kernel` (chunk-parallel, the key width in blocks of ``wy_bk``): the WY backward, dk, dbeta,
   dg (and dv for float32 / float64 inputs).
5+6. :func:`_dqk_wy_kernel` (chunk-parallel): both in one launch, so dX and the non-WY part of dk are not written
   and read back as separate tensors; the table's ``fuse`` (no gate) / ``fuse_gated`` entries pick it: faster for
   bf16 without a gate, slower with a gate and for float32, where it spills (RESULTS.md "kernels", sixth round).

Precision: bf16/fp16 inputs use tensor-core dots on operands rounded to the input dtype with float32 accumulation
(as fla); the stored intermediates T, S_n, U', dS_n, dY, dX are in the input dtype (as fla), the gradients are
written in the inputs' dtypes directly. float32 inputs use float32 intermediates and, by default, tf32 tensor-core
dots with the 3xTF32 split (``FP32_PRECISION = "tf32x3"``: each operand a = a_hi + a_lo in tf32, three products;
about fp32 accuracy); ``"tf32"`` is one pass on operands rounded to tf32 to nearest (errors ~1e-3 against
~6e-3 for bf16). float64 uses IEEE float64 dots (for checking). Triton 3.6 also offers bf16x3 / bf16x6 splits:
compiled on an H100 they gave wrong dk/dv/dbeta here, so they are not offered; nor is a hand-written bf16
three-product split (tried: the state passes ran no faster than one-pass tf32, so the float32 cost is not in the
products, and triton 3.6 returned NaN dk in the WY backward and faulted in the reverse state pass with 32-wide
value blocks; benchmarks/RESULTS.md, "kernels"). Head widths 17..32 in 2-byte dtypes
run zero-padded to 64 (:func:`_padded`: a miscompile at width 32).
Variable lengths (``cu_seqlens``): chunks never straddle a sequence; without it the B rows are B sequences.
"""
from __future__ import annotations

import torch

from .._checks import acc_dtype
from .._triton import INTERPRET, TL_DTYPE, check_device, tl, triton
from .tiles import _dot, _op, _tinv
from ...errors import InputError

FP32_PRECISION = "tf32x3"
# (value block, warps) per kernel for 2-byte inputs, from the H100 sweeps of benchmarks/bench_kernels.py --sweep,
# benchmarks/profile_gh.py --sweep / --set (K = V = 128; RESULTS.md "kernels");
# float32 / float64 tiles take twice / four times the registers and shared memory, so they run one pipeline stage
# unless an entry names two, and smaller blocks. Every setting listed in proofs_tests/kernels/gh/test_wy.py
# (test_every_kernel_setting_compiled) gave right gradients compiled on an H100, or did not fit and says so.
# A kernel's entry is (value block, warps) or (value block, warps, pipeline stages); "state_fwd" is the one-pass
# forward's state pass (outputs inside), "state_rec" the state pass that stores S_n and U' (the backward's, and the
# split forward's), "output" the split forward's output kernel. "split": the forward stores S_n and U' and forms
# the outputs chunk-parallel (_output_kernel) instead of inside the state pass (float32: H100, 2026-11-24,
# RESULTS.md "kernels", fourth round). "wy_bk": the WY backward's key block. "keep" (the default of chunk_gh's
# ``keep_states``; implies the split forward): the backward takes the split forward's S_n and U' instead of
# recomputing them -- 10% (tf32) / 13% (3xTF32) off float32 fwd+bwd, for
# K V / C + V more saved numbers per position and head (384 at K = V = 128, C = 64: three times the size of q),
# which is why it is off by default (fla recomputes too). "fuse" / "fuse_gated" (without / with a gate): the
# backward's dq/dk part and WY part in one kernel (_dqk_wy_kernel, tiles "dqkwy", key block "dqkwy_bk") instead of
# two (_dqkwg_kernel, _wy_bwd_kernel); chosen by the H100 measurements of RESULTS.md "kernels", sixth round.
CONFIG = {"state_fwd": (64, 4), "state_rec": (64, 4), "state_bwd": (64, 4), "dqkwg": (64, 8), "dqkwg_bk": 128,
          "wy_bwd": (32, 4), "wy_bk": 64, "t_warps": 2, "output": (64, 4), "split": False,
          "keep": False, "fuse": True, "fuse_gated": False, "dqkwy": (64, 8, 3), "dqkwy_bk": 128}
CONFIG_WIDE = {"state_fwd": (64, 4), "state_rec": (64, 4), "state_bwd": (64, 4), "dqkwg": (32, 4), "dqkwg_bk": 64,
               "wy_bwd": (32, 4), "wy_bk": 32, "t_warps": 4, "output": (64, 4), "split": True,
               "keep": False, "fuse": False, "fuse_gated": False, "dqkwy": (32, 4), "dqkwy_bk": 32}
# float32 with one-pass tf32 dots (FP32_PRECISION = "tf32"): 8 warps pay off there (the WY backward at (64, 8)
# spills far fewer registers; with 3xTF32 and with bf16 8 warps were slower: RESULTS.md "kernels")
CONFIG_TF32 = dict(CONFIG_WIDE, state_fwd=(64, 8), state_rec=(32, 4), state_bwd=(32, 4), dqkwg=(64, 8, 2),
                   wy_bwd=(64, 8), wy_bk=64, dqkwy=(64, 8, 2), dqkwy_bk=64)
# float32 with 3xTF32 / IEEE products (float64 keeps CONFIG_WIDE: two pipeline stages of float64 tiles would not
# fit in shared memory)
CONFIG_F32 = dict(CONFIG_WIDE, state_bwd=(32, 4), dqkwg=(32, 4, 2), dqkwy=(32, 4), dqkwy_bk=64)
_CACHE: dict = {}


@triton.jit
def _o(x, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr, RND: tl.constexpr):
    """A dot operand: :func:`lrnnkit.kernels.gh.tiles._op`; RND (float32 with one-pass tf32 dots) rounds it to
    tf32 to nearest first (``cvt.rna.tf32.f32``): the tensor cores otherwise drop the low 13 bits, a truncation
    whose one-sided error adds up along K-long sums and the chunk recurrence."""
    if RND:
        return tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [x.to(tl.float32)], dtype=tl.float32,
                                         is_pure=True, pack=1)
    else:
        return _op(x, DT, ACC, EMU)


@triton.jit
def _gates(g_ptr, Gc_ptr, pos, mp, i_h, H: tl.constexpr, NH, ACC: tl.constexpr):
    """In-chunk cumulative log-gate G of the interleaved positions (g_t on the token's first position), stored."""
    first = mp & ((pos % NH) == 0)
    gg = tl.load(g_ptr + (pos // NH) * H + i_h, mask=first, other=0.0).to(ACC)
    G = tl.cumsum(gg, 0)
    tl.store(Gc_ptr + pos * H + i_h, G, mask=mp)
    return G


@triton.jit
def _seq_program(seqs_ptr, init_ptr, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr,
                 BV: tl.constexpr, ACC: tl.constexpr, HAS_INIT: tl.constexpr):
    """A state-pass program (grid axis 0 = value block, axis 1 = sequence x head): (head, the sequence's first and
    end positions, the index of its first chunk, key / value indices of its K x BV state tile and their masks,
    the tile's offsets in a per-sequence (N, H, K, V) state tensor, the tile loaded from ``init_ptr`` when
    HAS_INIT, else zeros)."""
    i_sh = tl.program_id(1)
    i_s = i_sh // H
    i_h = i_sh % H
    rk = tl.arange(0, BK)
    rv = tl.program_id(0) * BV + tl.arange(0, BV)
    mk = rk < K
    mv = rv < V
    mkv = mk[:, None] & mv[None, :]
    soff = ((i_s * H + i_h) * K + rk[:, None]) * V + rv[None, :]
    if HAS_INIT:
        X = tl.load(init_ptr + soff, mask=mkv, other=0.0).to(ACC)
    else:
        X = tl.zeros([BK, BV], dtype=ACC)
    return (i_h, tl.load(seqs_ptr + 3 * i_s), tl.load(seqs_ptr + 3 * i_s + 1), tl.load(seqs_ptr + 3 * i_s + 2),
            rk, rv, mk, mv, mkv, soff, X)


@triton.jit
def _chunk_gates(Gc_ptr, row, mp, last, i_h, H: tl.constexpr, ACC: tl.constexpr):
    """(G, G_C): the in-chunk cumulative log-gate at the chunk's rows and at its last position ``last``. Padding
    rows get G_C, so every exponent exp(G_C - G_j) and exp(G_i - G_j) (i >= j) stays <= 0."""
    GL = tl.load(Gc_ptr + last * H + i_h).to(ACC)
    return tl.where(mp, tl.load(Gc_ptr + row, mask=mp, other=0.0).to(ACC), GL), GL


@triton.jit
def _chunk_program(chunks_ptr, NB, BT: tl.constexpr):
    """A chunk-parallel program (grid axis 0 = chunk x NB blocks, the block fastest, so that the blocks of one
    chunk run side by side and share its tiles through L2; axis 1 = head): (chunk, block, head, the chunk's start
    and end positions, row indices 0..BT-1, positions, their mask)."""
    i_n = tl.program_id(0) // NB
    start = tl.load(chunks_ptr + 2 * i_n)
    end = tl.load(chunks_ptr + 2 * i_n + 1)
    r = tl.arange(0, BT)
    pos = start + r
    return i_n, tl.program_id(0) % NB, tl.program_id(1), start, end, r, pos, pos < end


@triton.jit
def _t_kernel(k_ptr, b_ptr, g_ptr, Gc_ptr, t_ptr, chunks_ptr, H: tl.constexpr, K: tl.constexpr, NH,
              BT: tl.constexpr, BK: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
              EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, BLOCKED: tl.constexpr):
    """Chunk-parallel: G (stored when gated) and T = (I + A)^{-1}, stored rounded to the storage dtype exactly as
    the dots use it (C numbers per position, as fla keeps its A)."""
    _, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    rk = tl.arange(0, BK)
    row = pos * H + i_h
    mkk = mp[:, None] & (rk[None, :] < K)
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    low = r[:, None] > r[None, :]
    A = _dot(_o(kk * bb[:, None], DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
    if HAS_G:
        G = _gates(g_ptr, Gc_ptr, pos, mp, i_h, H, NH, ACC)
        A = A * tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    A = tl.where(low, A, 0.0)
    Tm = _o(_tinv(A, BT, ACC, PREC, BLOCKED), DT, ACC, EMU, RND)
    tl.store(t_ptr + row[:, None] * BT + r[None, :], Tm.to(t_ptr.dtype.element_ty), mask=mp[:, None])


@triton.jit
def _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, causal, kk, Sd, und, G, H: tl.constexpr,
                  K: tl.constexpr, V: tl.constexpr, NH, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                  EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr):
    """One chunk's outputs for one value block, stored at its query rows (each token's last position):
    O = diag(gamma) Q S_0 + M U', M = (Q K^T) * Gamma on and below the diagonal (``causal``); Sd, und are S_0 and
    U' as dot operands, G the in-chunk cumulative log-gate (read only when HAS_G). The one-pass forward calls it
    inside the state pass, the split forward from :func:`_output_kernel`."""
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0).to(ACC) * scale
    qk = _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
    if HAS_G:
        qk = qk * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
        qq = qq * tl.exp(G)[:, None]
    qk = tl.where(causal, qk, 0.0)
    o = _dot(_o(qq, DT, ACC, EMU, RND), Sd, PREC, ACC) + _dot(_o(qk, DT, ACC, EMU, RND), und, PREC, ACC)
    tl.store(o_ptr + trow[:, None] * V + rv[None, :], o.to(o_ptr.dtype.element_ty), mask=isq[:, None] & mv[None, :])


@triton.jit
def _state_fwd_kernel(q_ptr, k_ptr, v_ptr, b_ptr, t_ptr, Gc_ptr, h0_ptr, o_ptr, ht_ptr, h_ptr, vn_ptr, scale_ptr,
                      seqs_ptr, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, HAS_H0: tl.constexpr,
                      OUTPUT: tl.constexpr, STORE: tl.constexpr, FINAL: tl.constexpr):
    """Sequential over one sequence's chunks: OUTPUT writes o, STORE writes S_n and U', FINAL the final state.
    U' = U - W S_0 = T (diag(b) (V - diag(gamma) K S_0)) from T, v and b: W and U never go through memory (the
    cancellation V - gamma K S_0 happens in the accumulator, before any rounding)."""
    i_h, bos, eos, coff, rk, rv, mk, mv, mkv, soff, S = _seq_program(seqs_ptr, h0_ptr, H, K, V, BK, BV, ACC, HAS_H0)
    r = tl.arange(0, BT)
    scale = tl.load(scale_ptr).to(ACC)
    causal = r[:, None] >= r[None, :]
    NC = tl.cdiv(eos - bos, BT)
    for c in range(NC):
        pos = bos + c * BT + r
        mp = pos < eos
        row = pos * H + i_h
        mkk = mp[:, None] & mk[None, :]
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        if HAS_G:
            G, GL = _chunk_gates(Gc_ptr, row, mp, tl.minimum(bos + c * BT + BT, eos) - 1, i_h, H, ACC)
        if STORE:
            tl.store(h_ptr + (((coff + c) * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                     S.to(h_ptr.dtype.element_ty), mask=mkv)
        Sd = _o(S, DT, ACC, EMU, RND)
        mpv = mp[:, None] & mv[None, :]
        tt = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0), DT, ACC, EMU, RND)
        vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
        bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
        ks = _dot(_o(kk, DT, ACC, EMU, RND), Sd, PREC, ACC)
        if HAS_G:
            ks = ks * tl.exp(G)[:, None]
        un = _dot(tt, _o((vv - ks) * bb[:, None], DT, ACC, EMU, RND), PREC, ACC)
        if STORE:
            tl.store(vn_ptr + row[:, None] * V + rv[None, :], un.to(vn_ptr.dtype.element_ty), mask=mpv)
        und = _o(un, DT, ACC, EMU, RND)
        if OUTPUT:
            _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, causal, kk, Sd, und,
                          G if HAS_G else scale, H, K, V, NH, DT, ACC, PREC, EMU, RND, HAS_G)
        if HAS_G:
            kd = kk * tl.exp(GL - G)[:, None]
            S = S * tl.exp(GL) + _dot(_o(kd, DT, ACC, EMU, RND), und, PREC, ACC, True, False)
        else:
            S = S + _dot(_o(kk, DT, ACC, EMU, RND), und, PREC, ACC, True, False)
    if FINAL:
        tl.store(ht_ptr + soff, S.to(ht_ptr.dtype.element_ty), mask=mkv)


@triton.jit
def _output_kernel(q_ptr, k_ptr, Gc_ptr, h_ptr, vn_ptr, o_ptr, scale_ptr, chunks_ptr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr, BK: tl.constexpr,
                   BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
                   RND: tl.constexpr, HAS_G: tl.constexpr):
    """Chunk-parallel outputs from the stored chunk states and U' (:func:`_chunk_program`, blocks of values):
    O = diag(gamma) Q S_0 + M U', M = (Q K^T) * Gamma on and below the diagonal. The split forward: the state
    pass then carries only S (three products per chunk instead of five), which is what float32 tiles need."""
    i_n, i_v, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, tl.cdiv(V, BV), BT)
    rk = tl.arange(0, BK)
    mk = rk < K
    rv = i_v * BV + tl.arange(0, BV)
    mv = rv < V
    row = pos * H + i_h
    scale = tl.load(scale_ptr).to(ACC)
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mp[:, None] & mk[None, :], other=0.0).to(ACC)
    S = tl.load(h_ptr + ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :], mask=mk[:, None] & mv[None, :],
                other=0.0)
    un = tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0)
    if HAS_G:
        G, _ = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
    _chunk_output(q_ptr, o_ptr, scale, pos, mp, i_h, rk, mk, rv, mv, r[:, None] >= r[None, :], kk,
                  _o(S, DT, ACC, EMU, RND), _o(un, DT, ACC, EMU, RND), G if HAS_G else scale, H, K, V, NH, DT, ACC,
                  PREC, EMU, RND, HAS_G)


@triton.jit
def _state_bwd_kernel(q_ptr, k_ptr, b_ptr, t_ptr, Gc_ptr, do_ptr, dht_ptr, dh_ptr, dy_ptr, dv_ptr, dh0_ptr,
                      scale_ptr, seqs_ptr, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                      BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                      EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, HAS_DHT: tl.constexpr,
                      DV: tl.constexpr):
    """Reverse over one sequence's chunks: stores dS (gradient of the state after chunk n) and
    dY = T^T dU', dU' = M^T dO + Kd dS; then dS <- gamma_C dS + (diag(gamma) Q)^T dO - W^T dU', with
    W^T dU' = K^T diag(b gamma) dY formed from T (W is never stored). dY, not dU', is what the later kernels take:
    dX = T^T dW = -dY S_0^T needs no further product with T. dV = diag(b) dY is written here, from dY before it is
    rounded for storage (2-byte inputs: from the stored dY, dv's error grew past fla's)."""
    i_h, bos, eos, coff, rk, rv, mk, mv, mkv, soff, dS = _seq_program(seqs_ptr, dht_ptr, H, K, V, BK, BV, ACC,
                                                                       HAS_DHT)
    r = tl.arange(0, BT)
    scale = tl.load(scale_ptr).to(ACC)
    upper = r[:, None] <= r[None, :]     # (M^T)[j, i] lives at i >= j
    NC = tl.cdiv(eos - bos, BT)
    for cc in range(NC):
        c = NC - 1 - cc
        tl.store(dh_ptr + (((coff + c) * H + i_h) * K + rk[:, None]) * V + rv[None, :],
                 dS.to(dh_ptr.dtype.element_ty), mask=mkv)
        pos = bos + c * BT + r
        mp = pos < eos
        row = pos * H + i_h
        mkk = mp[:, None] & mk[None, :]
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        isq = mp & ((pos % NH) == (NH - 1))
        trow = (pos // NH) * H + i_h
        qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0)
        qq = qq.to(ACC) * scale
        do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
                 DT, ACC, EMU, RND)
        kq = _dot(_o(kk, DT, ACC, EMU, RND), _o(qq, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dSd = _o(dS, DT, ACC, EMU, RND)
        if HAS_G:
            G, GL = _chunk_gates(Gc_ptr, row, mp, tl.minimum(bos + c * BT + BT, eos) - 1, i_h, H, ACC)
            kq = kq * tl.exp(tl.where(upper, G[None, :] - G[:, None], 0.0))
            kd = kk * tl.exp(GL - G)[:, None]
            qq = qq * tl.exp(G)[:, None]
        else:
            kd = kk
        kq = tl.where(upper, kq, 0.0)
        dun = _dot(_o(kq, DT, ACC, EMU, RND), do, PREC, ACC) \
            + _dot(_o(kd, DT, ACC, EMU, RND), dSd, PREC, ACC)
        dund = _o(dun, DT, ACC, EMU, RND)
        tt = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0), DT, ACC, EMU, RND)
        bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
        y = _dot(tt, dund, PREC, ACC, True, False)
        tl.store(dy_ptr + row[:, None] * V + rv[None, :], y.to(dy_ptr.dtype.element_ty),
                 mask=mp[:, None] & mv[None, :])
        if DV:
            tl.store(dv_ptr + row[:, None] * V + rv[None, :], (y * bb[:, None]).to(dv_ptr.dtype.element_ty),
                     mask=mp[:, None] & mv[None, :])
        if HAS_G:
            bb = bb * tl.exp(G)
        wdu = _dot(_o(kk * bb[:, None], DT, ACC, EMU, RND), _o(y, DT, ACC, EMU, RND), PREC, ACC, True, False)
        upd = _dot(_o(qq, DT, ACC, EMU, RND), do, PREC, ACC, True, False) - wdu
        if HAS_G:
            dS = dS * tl.exp(GL) + upd
        else:
            dS = dS + upd
    tl.store(dh0_ptr + soff, dS.to(dh0_ptr.dtype.element_ty), mask=mkv)


@triton.jit
def _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                 H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                 BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
                 RND: tl.constexpr, HAS_G: tl.constexpr, WITH_D: tl.constexpr):
    """One chunk's products with its states, for one key block (rows ``rk``), summed over value blocks:
    (dO S_0^T, U' dS^T, dX = -dY S_0^T, D = dO U'^T before gating and masking (WITH_D, else zeros),
    rowsum(S_0 * dS) (gated, else zeros)). :func:`_dqkwg_kernel` and :func:`_dqk_wy_kernel` share it."""
    dq = tl.zeros([BT, BK], dtype=ACC)
    dk = tl.zeros([BT, BK], dtype=ACC)
    dx = tl.zeros([BT, BK], dtype=ACC)
    Dm = tl.zeros([BT, BT], dtype=ACC)
    sdS = tl.zeros([BK], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):
        rv = i_v * BV + tl.arange(0, BV)
        mv = rv < V
        mkv = mk[:, None] & mv[None, :]
        mpv = mp[:, None] & mv[None, :]
        hoff = ((i_n * H + i_h) * K + rk[:, None]) * V + rv[None, :]
        S = tl.load(h_ptr + hoff, mask=mkv, other=0.0)
        dS = tl.load(dh_ptr + hoff, mask=mkv, other=0.0)
        un = _o(tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0), DT, ACC, EMU, RND)
        dy = _o(tl.load(dy_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0), DT, ACC, EMU, RND)
        do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
                DT, ACC, EMU, RND)
        Sd = _o(S, DT, ACC, EMU, RND)
        dq += _dot(do, Sd, PREC, ACC, False, True)
        if WITH_D:
            Dm += _dot(do, un, PREC, ACC, False, True)
        dk += _dot(un, _o(dS, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dx -= _dot(dy, Sd, PREC, ACC, False, True)
        if HAS_G:
            sdS += tl.sum(S.to(ACC) * dS.to(ACC), 1)
    return dq, dk, dx, Dm, sdS


@triton.jit
def _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, mv, V: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr,
              PREC: tl.constexpr, EMU: tl.constexpr, RND: tl.constexpr, DV: tl.constexpr):
    """One value block's share of the WY backward's dY terms: (dY Y^T with Y = diag(b) V, rowsum(V * dY)); stores
    dv = diag(b) dY when DV (float32 / float64; 2-byte dv comes from the reverse pass)."""
    mpv = mp[:, None] & mv[None, :]
    dY = tl.load(dy_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
    vv = tl.load(v_ptr + row[:, None] * V + rv[None, :], mask=mpv, other=0.0).to(ACC)
    if DV:
        tl.store(dv_ptr + row[:, None] * V + rv[None, :], (dY * bb[:, None]).to(dv_ptr.dtype.element_ty), mask=mpv)
    return (_dot(_o(dY, DT, ACC, EMU, RND), _o(vv * bb[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True),
            tl.sum(dY * vv, 1))


@triton.jit
def _dqkwg_kernel(q_ptr, k_ptr, Gc_ptr, h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, dq_ptr, dk_ptr, dx_ptr, dG_ptr,
                  scale_ptr, chunks_ptr, L,
                  H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                  BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                  EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr):
    """Chunk-parallel (:func:`_chunk_program`, blocks of keys: U', dY, dO are read once from memory, then from
    L2): dQ = diag(gamma) dO S_0^T + D K,
    dK = D^T Q + diag(exp(G_C - G)) U' dS^T, dX = T^T dW = -dY S_0^T (dW = -dU' S_0^T), and this key block's share
    of the part of dG that needs the chunk states (dG is linear in the key-column sums, so the blocks' shares add;
    stored per block)."""
    i_n, i_k, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, tl.cdiv(K, BK), BT)
    rk = i_k * BK + tl.arange(0, BK)
    mk = rk < K
    row = pos * H + i_h
    mkk = mp[:, None] & mk[None, :]
    scale = tl.load(scale_ptr).to(ACC)
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0).to(ACC) * scale
    kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
    dq, dk, dx, Dm, sdS = _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                                       H, K, V, BT, BK, BV, DT, ACC, PREC, EMU, RND, HAS_G, True)
    causal = r[:, None] >= r[None, :]
    if HAS_G:
        nlast = end - start - 1
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        dq = dq * tl.exp(G)[:, None]
        dG = tl.sum(dq * qq, 1)
        Dm = Dm * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
        dk = dk * tl.exp(GL - G)[:, None]
        Fj = tl.sum(dk * kk, 1)
        Dm = tl.where(causal, Dm, 0.0)
        E = Dm * _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dG += tl.sum(E, 1) - tl.sum(E, 0) - Fj
        dG += tl.where(r == nlast, tl.exp(GL) * tl.sum(sdS, 0) + tl.sum(Fj, 0), 0.0)
        tl.store(dG_ptr + i_k * L * H + row, dG, mask=mp)
    else:
        Dm = tl.where(causal, Dm, 0.0)
    Dd = _o(Dm, DT, ACC, EMU, RND)
    dq += _dot(Dd, _o(kk, DT, ACC, EMU, RND), PREC, ACC)
    dk += _dot(Dd, _o(qq, DT, ACC, EMU, RND), PREC, ACC, True, False)
    tl.store(dq_ptr + trow[:, None] * K + rk[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=isq[:, None] & mk[None, :])
    tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk, mask=mkk)
    tl.store(dx_ptr + row[:, None] * K + rk[None, :], dx, mask=mkk)


@triton.jit
def _dk_wy(Pd, kk, bb, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr, EMU: tl.constexpr,
           RND: tl.constexpr):
    """The part of dk through A (one key block): diag(b) P K + P^T diag(b) K, P = dA * Gamma (module text)."""
    return _dot(Pd, _o(kk, DT, ACC, EMU, RND), PREC, ACC) * bb[:, None] \
        + _dot(Pd, _o(kk * bb[:, None], DT, ACC, EMU, RND), PREC, ACC, True, False)


@triton.jit
def _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H: tl.constexpr, NH,
           HAS_G: tl.constexpr):
    """The WY backward's last step: dbeta = db + rowsum(gamma K * dX) + rowsum(P * K K^T) (``db`` holding
    rowsum(V * dY), ``kdx`` rowsum(K * dX)) stored; gated: dG (holding the other parts) gets
    b gamma rowsum(K * dX) + rowsum(R) - colsum(R), R = P * K K^T * b, and dg = its reverse in-chunk cumulative sum
    is stored at each token's first position."""
    db += kdx * gam + tl.sum(P * KK, 1)
    tl.store(db_ptr + row, db.to(db_ptr.dtype.element_ty), mask=mp)
    if HAS_G:
        R = P * KK * bb[:, None]
        dG += bb * gam * kdx + tl.sum(R, 1) - tl.sum(R, 0)
        dG = tl.where(mp, dG, 0.0)
        dg = tl.cumsum(dG, 0, reverse=True)
        first = mp & ((pos % NH) == 0)
        tl.store(dg_ptr + (pos // NH) * H + i_h, dg.to(dg_ptr.dtype.element_ty), mask=first)


@triton.jit
def _wy_bwd_kernel(k_ptr, v_ptr, b_ptr, Gc_ptr, t_ptr, dx_ptr, dy_ptr, dkp_ptr, dGp_ptr, dk_ptr, dv_ptr, db_ptr,
                   dg_ptr, chunks_ptr, L, NKB: tl.constexpr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                   BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                   EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, DV: tl.constexpr):
    """Chunk-parallel WY backward (module text) from dX = T^T dW and dY = T^T dU (the earlier kernels form
    them; the reverse pass wrote dv = diag(b) dY): dA = -strictly_lower(T^T dT T^T) =
    -strictly_lower((dX X^T + dY Y^T) T^T), one product with T (reads T, kept by the forward); adds the WY part of
    dk, writes dk, dbeta, and dg as the reverse in-chunk cumulative sum of dG. The key dimension runs in blocks of
    BK (two passes: K K^T and dX X^T first, then dk per block once P is known), so that no BT x K tile has to stay
    in registers: float32 tiles of the whole key width spilled."""
    _, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    row = pos * H + i_h
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    low = r[:, None] > r[None, :]
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        gam = tl.exp(G)
        Gam = tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    else:
        gam = tl.zeros([BT], dtype=ACC) + 1.0
    Tmo = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0).to(ACC), DT, ACC, EMU,
             RND)
    bg = bb * gam
    KK = tl.zeros([BT, BT], dtype=ACC)
    dT = tl.zeros([BT, BT], dtype=ACC)   # T^T dT = dX X^T + dY Y^T
    for i_k in range(tl.cdiv(K, BK)):   # K K^T and the dX X^T part
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kd = _o(kk, DT, ACC, EMU, RND)
        KK += _dot(kd, kd, PREC, ACC, False, True)
        dXd = _o(tl.load(dx_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0), DT, ACC, EMU, RND)
        dT += _dot(dXd, _o(kk * bg[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
    db = tl.zeros([BT], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):
        rv = i_v * BV + tl.arange(0, BV)
        t, d = _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, rv < V, V, DT, ACC, PREC, EMU, RND, DV)
        dT += t
        db += d
    dA = _dot(_o(dT, DT, ACC, EMU, RND), Tmo, PREC, ACC, False, True)
    dA = tl.where(low, -dA, 0.0)
    if HAS_G:
        P = dA * Gam
    else:
        P = dA
    Pd = _o(P, DT, ACC, EMU, RND)
    kdx = tl.zeros([BT], dtype=ACC)
    for i_k in range(tl.cdiv(K, BK)):   # dk = dk' + diag(b gamma) dX + diag(b) P K + P^T diag(b) K
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        dX = tl.load(dx_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kdx += tl.sum(dX * kk, 1)
        dk = tl.load(dkp_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC) + dX * bg[:, None] \
            + _dk_wy(Pd, kk, bb, DT, ACC, PREC, EMU, RND)
        tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk.to(dk_ptr.dtype.element_ty), mask=mkk)
    dG = tl.zeros([BT], dtype=ACC)
    if HAS_G:
        for i_k in tl.static_range(NKB):
            dG += tl.load(dGp_ptr + i_k * L * H + row, mask=mp, other=0.0).to(ACC)
    _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H, NH, HAS_G)


@triton.jit
def _dqk_wy_kernel(q_ptr, k_ptr, v_ptr, b_ptr, Gc_ptr, t_ptr, h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, dq_ptr,
                   dkp_ptr, dk_ptr, dv_ptr, db_ptr, dg_ptr, scale_ptr, chunks_ptr,
                   H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, NH, BT: tl.constexpr,
                   BK: tl.constexpr, BV: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, PREC: tl.constexpr,
                   EMU: tl.constexpr, RND: tl.constexpr, HAS_G: tl.constexpr, DV: tl.constexpr):
    """Chunk-parallel, one program per chunk and head: :func:`_dqkwg_kernel` and :func:`_wy_bwd_kernel` in one
    launch, so that dX and the non-WY part of dk never go through memory as separate tensors (module text):

    1. over value blocks: D = (dO U'^T) * Gamma (lower incl. diagonal), dY Y^T, rowsum(V * dY), and dv = diag(b) dY
       when DV (float32 / float64: the reverse pass then does not write it);
    2. over key blocks (of BK), each over value blocks: dQ = diag(gamma) dO S_0^T + D K (stored),
       dK' = D^T Q + diag(exp(G_C - G)) U' dS^T + diag(b gamma) dX with dX = -dY S_0^T, kept in ``dkp`` (the
       float32 dk itself, or a float32 scratch for 2-byte dk); dX X^T joins dY Y^T into T^T dT;
    3. dA = -strictly_lower((dX X^T + dY Y^T) T^T), P = dA * Gamma; over key blocks: dk = dK' + diag(b) P K
       + P^T diag(b) K, K K^T; then dbeta and dg (the reverse in-chunk cumulative sum of dG)."""
    i_n, _, i_h, start, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    row = pos * H + i_h
    scale = tl.load(scale_ptr).to(ACC)
    isq = mp & ((pos % NH) == (NH - 1))
    trow = (pos // NH) * H + i_h
    bb = tl.load(b_ptr + row, mask=mp, other=0.0).to(ACC)
    causal = r[:, None] >= r[None, :]
    low = r[:, None] > r[None, :]
    if HAS_G:
        G, GL = _chunk_gates(Gc_ptr, row, mp, end - 1, i_h, H, ACC)
        gam = tl.exp(G)
    else:
        gam = tl.zeros([BT], dtype=ACC) + 1.0
    bg = bb * gam
    Dm = tl.zeros([BT, BT], dtype=ACC)
    dT = tl.zeros([BT, BT], dtype=ACC)   # T^T dT = dX X^T + dY Y^T
    db = tl.zeros([BT], dtype=ACC)
    for i_v in range(tl.cdiv(V, BV)):    # 1.
        rv = i_v * BV + tl.arange(0, BV)
        mv = rv < V
        un = _o(tl.load(vn_ptr + row[:, None] * V + rv[None, :], mask=mp[:, None] & mv[None, :], other=0.0), DT, ACC,
                EMU, RND)
        do = _o(tl.load(do_ptr + trow[:, None] * V + rv[None, :], mask=isq[:, None] & mv[None, :], other=0.0),
                DT, ACC, EMU, RND)
        Dm += _dot(do, un, PREC, ACC, False, True)
        t, d = _dy_terms(dy_ptr, v_ptr, dv_ptr, row, mp, bb, rv, mv, V, DT, ACC, PREC, EMU, RND, DV)
        dT += t
        db += d
    if HAS_G:
        Dm = Dm * tl.exp(tl.where(causal, G[:, None] - G[None, :], 0.0))
        QK = tl.zeros([BT, BT], dtype=ACC)
        sdS_all = tl.zeros([BK], dtype=ACC)   # rowsum(S_0 * dS), the key blocks added up
        Fj = tl.zeros([BT], dtype=ACC)
    Dm = tl.where(causal, Dm, 0.0)
    Dd = _o(Dm, DT, ACC, EMU, RND)
    kdx = tl.zeros([BT], dtype=ACC)
    dG = tl.zeros([BT], dtype=ACC)
    for i_k in range(tl.cdiv(K, BK)):    # 2.
        rk = i_k * BK + tl.arange(0, BK)
        mk = rk < K
        mkk = mp[:, None] & mk[None, :]
        qq = tl.load(q_ptr + trow[:, None] * K + rk[None, :], mask=isq[:, None] & mk[None, :], other=0.0)
        qq = qq.to(ACC) * scale
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        dq, dk, dx, D0, sdS = _state_terms(h_ptr, dh_ptr, vn_ptr, dy_ptr, do_ptr, i_n, i_h, row, trow, mp, isq, rk, mk,
                                          H, K, V, BT, BK, BV, DT, ACC, PREC, EMU, RND, HAS_G, False)   # D0: zeros
        if HAS_G:
            sdS_all += sdS
            dq = dq * gam[:, None]
            dG += tl.sum(dq * qq, 1)
            dk = dk * tl.exp(GL - G)[:, None]
            Fj += tl.sum(dk * kk, 1)
            QK += _dot(_o(qq, DT, ACC, EMU, RND), _o(kk, DT, ACC, EMU, RND), PREC, ACC, False, True)
        dq += _dot(Dd, _o(kk, DT, ACC, EMU, RND), PREC, ACC)
        tl.store(dq_ptr + trow[:, None] * K + rk[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
                 mask=isq[:, None] & mk[None, :])
        dk += _dot(Dd, _o(qq, DT, ACC, EMU, RND), PREC, ACC, True, False) + dx * bg[:, None]
        kdx += tl.sum(dx * kk, 1)
        dT += _dot(_o(dx, DT, ACC, EMU, RND), _o(kk * bg[:, None], DT, ACC, EMU, RND), PREC, ACC, False, True)
        tl.store(dkp_ptr + row[:, None] * K + rk[None, :], dk, mask=mkk)
    if HAS_G:
        E = Dm * QK
        dG += tl.sum(E, 1) - tl.sum(E, 0) - Fj
        dG += tl.where(r == end - start - 1, tl.exp(GL) * tl.sum(sdS_all, 0) + tl.sum(Fj, 0), 0.0)
    Tmo = _o(tl.load(t_ptr + row[:, None] * BT + r[None, :], mask=mp[:, None], other=0.0).to(ACC), DT, ACC, EMU,
             RND)
    dA = _dot(_o(dT, DT, ACC, EMU, RND), Tmo, PREC, ACC, False, True)
    P = tl.where(low, -dA, 0.0)
    if HAS_G:
        P = P * tl.exp(tl.where(low, G[:, None] - G[None, :], 0.0))
    Pd = _o(P, DT, ACC, EMU, RND)
    KK = tl.zeros([BT, BT], dtype=ACC)
    tl.debug_barrier()   # step 2's dK' stores are read back below, by other threads of this program
    for i_k in range(tl.cdiv(K, BK)):    # 3.
        rk = i_k * BK + tl.arange(0, BK)
        mkk = mp[:, None] & (rk[None, :] < K)
        kk = tl.load(k_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0).to(ACC)
        kd = _o(kk, DT, ACC, EMU, RND)
        KK += _dot(kd, kd, PREC, ACC, False, True)
        dk = tl.load(dkp_ptr + row[:, None] * K + rk[None, :], mask=mkk, other=0.0) \
            + _dk_wy(Pd, kk, bb, DT, ACC, PREC, EMU, RND)
        tl.store(dk_ptr + row[:, None] * K + rk[None, :], dk.to(dk_ptr.dtype.element_ty), mask=mkk)
    _db_dg(db_ptr, dg_ptr, db, dG, P, KK, kdx, bb, gam, row, pos, mp, i_h, H, NH, HAS_G)


# --------------------------------------------------------------------------------------------- host side

FP32_MODES = ("tf32x3", "tf32", "ieee")


def fp32_mode(fp32_precision=None) -> str:
    """The float32 product mode in force: ``fp32_precision``, else the module's ``FP32_PRECISION``; an InputError
    unless it is one of FP32_MODES."""
    prec = FP32_PRECISION if fp32_precision is None else fp32_precision
    if prec not in FP32_MODES:
        raise InputError(f"fp32_precision must be one of {', '.join(FP32_MODES)}, got {prec!r}")
    return prec


def config_table(dtype, fp32_precision=None) -> dict:
    """The kernel-setting table for inputs of ``dtype``: CONFIG (2-byte), CONFIG_TF32 (float32 with one-pass tf32),
    CONFIG_F32 (float32 with 3xTF32 / IEEE), CONFIG_WIDE (float64)."""
    if dtype in (torch.float16, torch.bfloat16):
        return CONFIG
    if dtype == torch.float32:
        return CONFIG_TF32 if fp32_mode(fp32_precision) == "tf32" else CONFIG_F32
    return CONFIG_WIDE


def _config(dtype, fp32_precision=None):
    """(operand dtype, accumulation dtype, dot precision, intermediate storage dtype)."""
    acc = acc_dtype(dtype)
    if dtype in (torch.float16, torch.bfloat16):
        return dtype, acc, "tf32", dtype
    if dtype == torch.float32:
        return acc, acc, fp32_mode(fp32_precision), acc
    return acc, acc, "ieee", acc


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
        self.cfg = config_table(q.dtype, fp32_precision)
        self.keep = bool(self.cfg["keep"] if keep_states is None else keep_states)
        self.split = bool(self.cfg["split"]) or self.keep   # kept states come from the split forward

    def consts(self):
        return (self.H, self.K, self.V, self.NH, self.BT)

    def types(self):
        return (TL_DTYPE[self.DT], TL_DTYPE[self.ACC], self.PREC, self.EMU, self.RND)

    def bv(self, which):
        """(value block, warps, stages) of a kernel. 2-byte inputs run two pipeline stages by default: with one,
        triton 3.6 on an H100 computed a wrong dq; float32 / float64 tiles run one (shared memory)."""
        bv, nw, *st = self.cfg[which]
        stages = 2 if self.DT != self.ACC else 1
        return min(self.BVF, bv), nw, (st[0] if st else stages)



def _flat(q, k, v, beta, g):
    H, K = q.shape[2], q.shape[3]
    V = v.shape[-1]
    f = lambda x, w: x.contiguous().reshape(-1, H, w)  # noqa: E731
    return (f(q, K), f(k, K), f(v, V), beta.contiguous().reshape(-1, H),
            g.contiguous().reshape(-1, H) if g is not None else None)


def _t_pass(c, kf, bf, gf):
    """G (gated) and T (L, H, BT), one chunk-parallel launch."""
    L = kf.shape[0]
    Gc = torch.empty(L, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None
    tm = torch.empty(L, c.H, c.BT, dtype=c.ST, device=c.dev)
    if c.NT:
        _t_kernel[(c.NT, c.H)](kf, bf, _or(gf, bf), _or(Gc, bf), tm, c.chunks, c.H, c.K, c.NH, c.BT, c.BK,
                               *c.types(), c.has_g, c.BLOCKED, num_warps=c.cfg["t_warps"])
    return Gc, tm


def _or(x, other):
    """A pointer argument for an unused (None) tensor: any tensor does, the kernel never touches it."""
    return other if x is None else x


def _state_pass(c, qf, kf, vf, bf, tm, Gc, h0, scale_t, output, store, final):
    """Launch the sequential state pass: ``output`` -> o; ``store`` -> (S_n per chunk, U'); ``final`` -> the final
    state. Returns (o, final state, S_n, U'), None for what was not asked."""
    o = ht = h = vn = None
    if output:
        o = torch.empty(c.Ltok, c.H, c.V, dtype=qf.dtype, device=c.dev)   # every token row is written
    if final:
        ht = torch.empty(c.N, c.H, c.K, c.V, dtype=c.ACC, device=c.dev)
    if store:
        h = torch.empty(max(c.NT, 1), c.H, c.K, c.V, dtype=c.ST, device=c.dev)
        vn = torch.empty(kf.shape[0], c.H, c.V, dtype=c.ST, device=c.dev)
    BV, nw, ns = c.bv("state_fwd" if output else "state_rec")
    x = kf
    _state_fwd_kernel[(triton.cdiv(c.V, BV), c.N * c.H)](
        qf, kf, vf, bf, tm, _or(Gc, x), _or(h0, x), _or(o, x), _or(ht, x), _or(h, x), _or(vn, x), scale_t, c.seqs,
        *c.consts(), c.BK, BV, *c.types(), c.has_g, h0 is not None, output, store, final, num_warps=nw,
        num_stages=ns)
    return o, ht, h, vn


def _output_pass(c, qf, kf, Gc, h, vn, scale_t):
    """o from the stored chunk states and U' (:func:`_output_kernel`, chunk-parallel)."""
    o = torch.empty(c.Ltok, c.H, c.V, dtype=qf.dtype, device=c.dev)   # every token row is written
    BV, nw, ns = c.bv("output")
    if c.NT:
        _output_kernel[(c.NT * triton.cdiv(c.V, BV), c.H)](
            qf, kf, _or(Gc, kf), h, vn, o, scale_t, c.chunks, *c.consts(), c.BK, BV, *c.types(), c.has_g,
            num_warps=nw, num_stages=ns)
    return o


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
    dh = torch.empty_like(h)
    dy = torch.empty_like(vn)
    tq, tk, tv, tb = out_dtypes
    dv = torch.empty(L, c.H, c.V, dtype=tv, device=c.dev)
    dh0 = torch.empty(c.N, c.H, c.K, c.V, dtype=c.ACC, device=c.dev)
    dof = do.contiguous().reshape(-1, c.H, c.V)
    x = kf
    fuse = bool(c.cfg["fuse_gated" if c.has_g else "fuse"])
    dv_rev = c.DT != c.ACC   # 2-byte inputs: dv from the unrounded dY (see _state_bwd_kernel); else a later kernel
    BV, nw, ns = c.bv("state_bwd")
    _state_bwd_kernel[(triton.cdiv(c.V, BV), c.N * c.H)](
        qf, kf, bf, tm, _or(Gc, x), dof, dht.contiguous() if dht is not None else dh0, dh, dy, dv, dh0,
        scale_t, c.seqs, *c.consts(), c.BK, BV, *c.types(), c.has_g, dht is not None, dv_rev, num_warps=nw,
        num_stages=ns)
    dq = torch.empty(c.Ltok, c.H, c.K, dtype=tq, device=c.dev)   # every token row is written
    dk = torch.empty(L, c.H, c.K, dtype=tk, device=c.dev)
    db = torch.empty(L, c.H, dtype=tb, device=c.dev)
    dg = torch.empty(c.Ltok, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None   # every token's first position
    # dk's partial sum (everything but the WY terms) in float32: the float32 dk itself (each program reads its rows
    # back before it overwrites them), a scratch for 2-byte dk
    dkp = dk if dk.dtype == c.ACC else torch.empty(L, c.H, c.K, dtype=c.ACC, device=c.dev)
    if fuse:
        BV, nw, ns = c.bv("dqkwy")
        if c.NT:
            _dqk_wy_kernel[(c.NT, c.H)](qf, kf, vf, bf, _or(Gc, x), tm, h, dh, vn, dy, dof, dq, dkp, dk, dv, db,
                                        _or(dg, x), scale_t, c.chunks, *c.consts(), min(c.BK, c.cfg["dqkwy_bk"]),
                                        BV, *c.types(), c.has_g, not dv_rev, num_warps=nw, num_stages=ns)
        return dq, dk, dv, db, dg, dh0
    dx = torch.empty(L, c.H, c.K, dtype=c.ST, device=c.dev)
    BV, nw, ns = c.bv("dqkwg")
    BKS = min(c.BK, c.cfg["dqkwg_bk"])
    NKB = triton.cdiv(c.K, BKS)
    dGp = torch.empty(NKB, L, c.H, dtype=c.ACC, device=c.dev) if c.has_g else None
    if c.NT:
        _dqkwg_kernel[(c.NT * NKB, c.H)](qf, kf, _or(Gc, x), h, dh, vn, dy, dof, dq, dkp, dx, _or(dGp, x), scale_t,
                                        c.chunks, L, *c.consts(), BKS, BV, *c.types(), c.has_g, num_warps=nw,
                                        num_stages=ns)
    del h, dh, vn
    BV, nw, ns = c.bv("wy_bwd")
    BKW = min(c.BK, c.cfg["wy_bk"])
    if c.NT:
        _wy_bwd_kernel[(c.NT, c.H)](kf, vf, bf, _or(Gc, x), tm, dx, dy, dkp, _or(dGp, x), dk, dv, db, _or(dg, x),
                                    c.chunks, L, NKB, *c.consts(), BKW, BV, *c.types(), c.has_g, not dv_rev,
                                    num_warps=nw, num_stages=ns)
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
    """Canonical inputs (see :func:`lrnnkit.kernels.gh.api.canonical`) -> ``(o, final_state)``, differentiable.
    ``fp32_precision`` (float32 inputs): one of FP32_MODES, default the module's FP32_PRECISION. ``keep_states``:
    :func:`lrnnkit.kernels.gh.api.chunk_gh`."""
    check_device(q, k, v, beta, g, h0)
    fp32_mode(fp32_precision)   # a bad mode is refused before any padding or launch
    if chunk_size not in (16, 32, 64):
        raise InputError(f"chunk_size must be 16, 32 or 64, got {chunk_size}")
    K, V = q.shape[-1], v.shape[-1]
    pk, pv = _padded(K, V, q.dtype)
    if (pk, pv) == (K, V):
        return ChunkGHFunction.apply(q, k, v, beta, g, h0, float(scale), cu_seqlens, chunk_size, fp32_precision,
                                     keep_states)
    # zero columns: keys stay unit vectors, the padded state rows / columns stay zero and get no gradient back
    pad = torch.nn.functional.pad
    o, ht = ChunkGHFunction.apply(pad(q, (0, pk - K)), pad(k, (0, pk - K)), pad(v, (0, pv - V)), beta, g,
                                  None if h0 is None else pad(h0, (0, pv - V, 0, pk - K)), float(scale), cu_seqlens,
                                  chunk_size, fp32_precision, keep_states)
    return o[..., :V], ht[..., :K, :V]


def default_chunk(dtype, fp32_precision=None) -> int:
    """The chunk size ``chunk_gh`` runs when none is given: 64, but 16 for float32 inputs with 3xTF32 products
    (the smaller tiles are what 3xTF32 needs; one-pass tf32 and bf16 are fastest at 64: the H100 measurements of
    benchmarks/RESULTS.md, "kernels", B=8, T=4096, H=16, K=V=128)."""
    if dtype == torch.float32 and fp32_mode(fp32_precision) == "tf32x3":
        return 16
    return 64


def _padded(K: int, V: int, dtype) -> tuple:
    """Key and value head widths ``(pK, pV)`` the compiled kernels run at: widths 17..32 of 2-byte inputs are
    zero-padded to 64 unless K = V = 32. Compiled by
    triton 3.6 on an H100, K = 32 gave a wrong dk and V = 32 a wrong dv / dbeta (bf16; 16, 64 and 128 were right;
    ``test_every_gradient_wide_heads`` in proofs_tests/kernels/gh/test_wy.py, run compiled, shows it); the cause is in
    the compiler's handling of those tiles, not in the equations (the interpreter and float32 are right at 32).
    K = V = 32 together runs unpadded: on the current kernels every output and gradient is right there (relative
    errors 0.6-1.1e-2 against float64, n_h = 1, 2, gated or not: the bf16 rounding), while K = 32 beside V = 128
    still gives NaN in dk / dbeta and K = 128 beside V = 32 wrong dk / dv / dbeta unpadded (benchmarks/RESULTS.md,
    "DeltaProduct layer against fla")."""
    if INTERPRET or dtype not in (torch.float16, torch.bfloat16) or K == V == 32:
        return K, V
    return tuple(64 if 16 < n <= 32 else n for n in (K, V))

