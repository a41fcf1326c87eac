"""Triton tile helpers of the chunked GH-product kernels (:mod:`.wy`): dot operands in the kernel's operand dtype,
and the inverse of a unit lower-triangular chunk matrix."""
from __future__ import annotations

from .._triton import tl, triton


@triton.jit
def _op(x, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr):
    """A dot operand rounded to DT. Under the interpreter (EMU) bf16/fp16 dots are wrong in triton 3.6 (numpy has
    no bfloat16), so the rounded operand is widened back to ACC: same rounding of the operands, float32 product."""
    if EMU:
        return x.to(DT).to(ACC)
    else:
        return x.to(DT)


@triton.jit
def _dot(a, b, PREC: tl.constexpr, ACC: tl.constexpr, TA: tl.constexpr = False, TB: tl.constexpr = False):
    """op(a) @ op(b) accumulated in ACC at dot precision PREC, op = transpose where TA / TB: every product of the
    :mod:`.wy` kernels goes through here (the operands arrive rounded by the kernel's ``_o``)."""
    if TA:
        a = tl.trans(a)
    if TB:
        b = tl.trans(b)
    return tl.dot(a, b, input_precision=PREC, out_dtype=ACC)


@triton.jit
def _diag_inv(A, BT: tl.constexpr, ACC: tl.constexpr, BC: tl.constexpr):
    """The inverse of I + (the BC x BC diagonal blocks of the strictly lower A), as a BT x BT tile: forward
    substitution inside every diagonal block at once (BC - 1 row updates of [BT / BC, BC, BC] tiles)."""
    NB: tl.constexpr = BT // BC
    nb = tl.arange(0, NB)
    ii = tl.arange(0, BC)
    A4 = tl.reshape(A, [NB, BC, NB, BC])
    same = nb[:, None, None, None] == nb[None, None, :, None]
    Ad = tl.sum(tl.where(same, A4, 0.0), 2)
    i3 = ii[None, :, None]
    j3 = ii[None, None, :]
    Td = tl.where(i3 == j3, 1.0, 0.0) + tl.zeros([NB, BC, BC], dtype=ACC)
    for i in range(1, BC):
        a_i = tl.sum(tl.where(i3 == i, Ad, 0.0), 1)
        upd = tl.sum(a_i[:, :, None] * Td, 1)
        Td = tl.where(i3 == i, Td - upd[:, None, :], Td)
    return tl.reshape(tl.where(same, Td[:, :, None, :], 0.0), [BT, BT])


@triton.jit
def _merge_blocks(D, A, BT: tl.constexpr, BIG: tl.constexpr, SMALL: tl.constexpr, ACC: tl.constexpr,
                  TPREC: tl.constexpr):
    """The inverse of I + (the BIG x BIG diagonal blocks of A) from D, the inverse of I + its SMALL x SMALL diagonal
    blocks, BIG / SMALL <= 4: with A_o the entries of the BIG blocks outside the SMALL ones, I + A = (I + A_d)(I + N),
    N = D A_o nilpotent (N^4 = 0), so the inverse is (I - N)(I + N^2) D: four BT x BT tensor-core products."""
    r = tl.arange(0, BT)
    inside = (r[:, None] // BIG) == (r[None, :] // BIG)
    Ao = tl.where(inside & ((r[:, None] // SMALL) > (r[None, :] // SMALL)), A, 0.0)
    N = tl.dot(D, Ao, input_precision=TPREC, out_dtype=ACC)
    M = D + tl.dot(tl.dot(N, N, input_precision=TPREC, out_dtype=ACC), D, input_precision=TPREC, out_dtype=ACC)
    return M - tl.dot(N, M, input_precision=TPREC, out_dtype=ACC)


@triton.jit
def _tinv(A, BT: tl.constexpr, ACC: tl.constexpr, TPREC: tl.constexpr, BLOCKED: tl.constexpr,
          SUB: tl.constexpr = 16):
    """T = (I + A)^{-1} for a strictly lower BT x BT tile A. BLOCKED: forward substitution inside the SUB x SUB
    diagonal blocks (all at once, :func:`_diag_inv`), then blocks four times larger at a time by products
    (:func:`_merge_blocks`): SUB = 16 (the default) goes 16 -> BT, one merge at BT = 32 or 64; SUB = 4 (or 8)
    goes 4 -> 16 -> BT, three (or seven) substitution steps in place of fifteen, for four more products.
    Else row-by-row substitution, used for float64: the blocked variant, compiled by triton 3.6 for an H200, gave
    wrong float64 results at chunk 64 (rows after the first 16-row block; right in float32 / bf16 and in the
    interpreter; benchmarks/RESULTS.md, section "kernels"); the cause was not isolated."""
    r = tl.arange(0, BT)
    if BLOCKED:
        BC: tl.constexpr = SUB if SUB < 16 else 16
        Tm = _diag_inv(A, BT, ACC, BC)
        if BC < 16:
            Tm = _merge_blocks(Tm, A, BT, 16, BC, ACC, TPREC)
        if BT > 16:
            Tm = _merge_blocks(Tm, A, BT, BT, 16, ACC, TPREC)
    else:
        Tm = tl.where(r[:, None] == r[None, :], 1.0, 0.0).to(ACC)
        for i in range(1, BT):
            a_i = tl.sum(tl.where(r[:, None] == i, A, 0.0), 0)
            upd = tl.sum(a_i[:, None] * Tm, 0)
            Tm = tl.where(r[:, None] == i, Tm - upd[None, :], Tm)
    return Tm
