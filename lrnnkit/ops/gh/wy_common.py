"""Triton helpers that every stage kernel of the chunked GH product (:mod:`.wy`) shares: a dot operand in the
kernel's operand dtype (:func:`_o`), a program's place in the grid (:func:`_seq_program` for the sequential state
passes, :func:`_chunk_program` for the chunk-parallel kernels), the in-chunk cumulative log-gate (:func:`_gates`
forms and stores it, :func:`_chunk_gates` reads it back), and on the host :func:`_or`, the stand-in for an unused
pointer argument."""
from __future__ import annotations

from .._triton import tl, triton
from .tiles import _op


@triton.jit
def _o(x, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr, RND: tl.constexpr):
    """A dot operand: :func:`lrnnkit.ops.gh.tiles._op`; RND (float32 with one-pass tf32 dots) rounds it to
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


def _or(x, other):
    """A pointer argument for an unused (None) tensor: any tensor does, the kernel never touches it."""
    return other if x is None else x
