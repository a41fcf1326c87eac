"""The jit helpers that the chunked GH kernels share (lrnnkit.ops.gh.wy_common): a chunk-parallel program's
place (:func:`_chunk_program`), the in-chunk cumulative log-gate of the interleaved positions (:func:`_gates`: g_t on
each token's first position) and its read-back (:func:`_chunk_gates`: padding rows of a short chunk get G_C), run
through two probe kernels on a sequence whose last chunk is short, against torch's cumulative sum."""
import torch

from lrnnkit.ops._triton import tl, triton
from lrnnkit.ops.gh.wy import _tables
from lrnnkit.ops.gh.wy_common import _chunk_gates, _chunk_program, _gates, _or
from proofs_tests.ops.gh._wy_stages import DEV, F64


@triton.jit
def _store_gates(g_ptr, Gc_ptr, chunks_ptr, H: tl.constexpr, NH, BT: tl.constexpr, ACC: tl.constexpr):
    _, _, i_h, _, _, _, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    _gates(g_ptr, Gc_ptr, pos, mp, i_h, H, NH, ACC)


@triton.jit
def _read_gates(Gc_ptr, out_ptr, last_ptr, chunks_ptr, H: tl.constexpr, BT: tl.constexpr, ACC: tl.constexpr):
    i_n, _, i_h, _, end, r, pos, mp = _chunk_program(chunks_ptr, 1, BT)
    G, GL = _chunk_gates(Gc_ptr, pos * H + i_h, mp, end - 1, i_h, H, ACC)
    tl.store(out_ptr + (i_n * BT + r) * H + i_h, G)
    tl.store(last_ptr + i_n * H + i_h, GL)


def test_cumulative_gates_per_chunk_and_padding_rows():
    T, NH, H, BT = 11, 2, 3, 16                     # 22 positions: chunks [0, 16) and [16, 22)
    g = -torch.rand(T, H, dtype=F64, generator=torch.Generator().manual_seed(1))
    chunks, _, NT = _tables((0, T), NH, BT, torch.device(DEV))
    assert chunks.cpu().tolist() == [[0, 16], [16, 22]]
    gi = torch.zeros(T, NH, H, dtype=F64)
    gi[:, 0] = g
    gi = gi.reshape(T * NH, H)
    want = torch.cat([gi[:16].cumsum(0), gi[16:].cumsum(0)])
    Gc = torch.full((T * NH, H), float("nan"), dtype=F64, device=DEV)
    _store_gates[(NT, H)](g.to(DEV), Gc, chunks, H, NH, BT, tl.float64)
    assert torch.allclose(Gc.cpu(), want, rtol=0, atol=1e-15)      # sums of at most 8 terms of size < 1
    out = torch.empty(NT * BT, H, dtype=F64, device=DEV)
    last = torch.empty(NT, H, dtype=F64, device=DEV)
    _read_gates[(NT, H)](Gc, out, last, chunks, H, BT, tl.float64)
    out, last = out.cpu(), last.cpu()
    assert torch.equal(last, torch.stack([want[15], want[21]]))
    assert torch.equal(out[:22], want)
    assert torch.equal(out[22:], want[21].expand(10, H))           # padding rows: G_C, so exp(G_C - G_j) <= 1


def test_or_stands_in_for_an_unused_pointer():
    x, y = torch.zeros(1), torch.ones(1)
    assert _or(None, x) is x and _or(y, x) is y
