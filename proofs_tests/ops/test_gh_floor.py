"""The floor counts of benchmarks/_floor.py (bytes and tensor-core FLOPs of each kernel of ``chunk_gh``'s forward
and backward) against a brute-force count: each stage's kernel is launched on its own in the Triton interpreter
with its memory and product operations wrapped, so that every ``tl.load`` / ``tl.store`` adds the bytes of its
unmasked elements to the tensor its addresses fall in, and every ``tl.dot`` adds 2 M N K. The analytic count
(:func:`_floor.plan`, from the shapes and the kernel table) and the brute-force one are independent: one reads
the kernels' source by hand, the other runs it. Both are integers, so they must agree exactly -- as written
(with repetitions), touched at the least (each tensor once: the set of distinct addresses), and in FLOPs.

Shapes: small and not powers of two where the kernels allow (V = 24 is two value blocks of 16, the last one
masked; T n_h not a multiple of the chunk: a short last chunk), n_h = 1, 2, 3, bf16 (two-byte storage, dv in the
reverse pass), float32 with tf32 and 3xTF32 (split forward, two-kernel backward, dv in the WY backward), and every
table switch (split, keep, fuse, once) on both dtypes.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

from benchmarks import _floor
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.gh.wy_config import config_table

pytestmark = pytest.mark.skipif(not INTERPRET, reason="counts loads in the Triton interpreter")


@contextlib.contextmanager
def counting():
    """Wrap the interpreter's masked load / store and dot: yields a record with the (address array, element size)
    of every load and store (unmasked elements only) and the list of dot shapes (M, N, K)."""
    from triton.runtime.interpreter import InterpreterBuilder as IB
    rec = {"loads": [], "stores": [], "dots": []}
    old = IB.create_masked_load, IB.create_masked_store, IB.create_dot

    def width(ptrs):
        return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)

    def load(self, ptrs, mask, other, *a):
        rec["loads"].append((np.broadcast_to(ptrs.data, mask.data.shape)[mask.data].astype(np.uint64), width(ptrs)))
        return old[0](self, ptrs, mask, other, *a)

    def store(self, ptrs, value, mask, *a):
        rec["stores"].append((np.broadcast_to(ptrs.data, mask.data.shape)[mask.data].astype(np.uint64), width(ptrs)))
        return old[1](self, ptrs, value, mask, *a)

    def dot(self, a, b, d, *rest):
        rec["dots"].append((a.data.shape[0], b.data.shape[1], a.data.shape[1]))
        return old[2](self, a, b, d, *rest)
    IB.create_masked_load, IB.create_masked_store, IB.create_dot = load, store, dot
    try:
        yield rec
    finally:
        IB.create_masked_load, IB.create_masked_store, IB.create_dot = old


def by_tensor(accesses, named):
    """(bytes with repetitions, distinct bytes) per tensor name; every address must fall in a named tensor."""
    spans = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), name, t.element_size())
             for name, t in named.items() if t is not None and t.numel()]
    total, distinct = {}, {}
    for addrs, w in accesses:
        inside = 0
        for lo, hi, name, size in spans:
            sel = addrs[(addrs >= lo) & (addrs < hi)]
            if sel.size:
                assert w == size, (name, "access width")
                total[name] = total.get(name, 0) + int(sel.size) * w
                distinct.setdefault(name, set()).update(sel.tolist())
                inside += sel.size
        assert inside == addrs.size, "an access outside every named tensor"
    return total, {name: len(s) * named[name].element_size() for name, s in distinct.items()}


def merged(*dicts):
    out = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


CASES = [  # (dtype, fp32 mode, n_h, T, chunk, table changes)
    (torch.bfloat16, None, 1, 20, 16, {}),
    (torch.bfloat16, None, 2, 13, 16, {}),
    (torch.bfloat16, None, 3, 7, 32, {"split": True, "fuse": False}),
    (torch.bfloat16, None, 2, 9, 16, {"keep": True}),
    (torch.float32, "tf32x3", 2, 11, 16, {}),
    (torch.float32, "tf32", 1, 24, 64, {"fuse": True}),
    (torch.float32, "tf32", 3, 6, 16, {"split": False, "dqkwg_bk": 16, "wy_bk": 16}),
    (torch.bfloat16, None, 3, 7, 16, {"once": True}),
    (torch.float32, "tf32", 2, 9, 32, {"fuse": True, "once": True}),
    (torch.bfloat16, None, 2, 13, 16, {"t_sub": 4}),                 # the T pass's extra merge: 4 -> 16
    (torch.float32, "tf32", 1, 24, 64, {"t_sub": 8}),                # 8 -> 16 -> 64
]


@pytest.mark.parametrize("dtype,prec,nh,T,C,changes", CASES,
                         ids=[f"{str(c[0])[6:]}-{c[1]}-nh{c[2]}-T{c[3]}-C{c[4]}-{'-'.join(c[5]) or 'table'}"
                              for c in CASES])
def test_floor_counts_match_the_kernels(dtype, prec, nh, T, C, changes, monkeypatch):
    B, H, K, V = 2, 2, 32, 24
    table = config_table(dtype, prec)
    for key, val in dict(changes, state_fwd=(16, 4), state_rec=(16, 4), state_bwd=(16, 4), output=(16, 4),
                         dqkwy=(16, 4), dqkwg=(16, 4), wy_bwd=(16, 4), dqkwy_once=(16, 4)).items():
        monkeypatch.setitem(table, key, val)   # 16-wide value blocks: V = 24 runs as two, the last one masked
    q, k, v, beta, do = _floor.inputs(nh, B, T, H, K, V, dtype, "cpu", seed=nh)
    stages = _floor.Stages(q, k, v, beta, do, nh, C, prec)
    plan = _floor.plan(dtype, nh, B, T, H, K, V, C, prec, table)
    assert [s.name for s in plan][0] == "t"
    for s in plan:
        with counting() as rec:
            wrote = stages.run[s.name]()
        named = {k_: t for k_, t in dict(stages.named, **wrote).items() if k_ not in stages.aliases}
        rd, rd1 = by_tensor(rec["loads"], named)
        wr, wr1 = by_tensor(rec["stores"], named)
        assert rd == s.reads, (s.name, "reads")
        assert wr == s.writes, (s.name, "writes")
        touched = {n: max(rd1.get(n, 0), wr1.get(n, 0)) for n in set(rd1) | set(wr1)}
        assert touched == s.sizes, (s.name, "distinct bytes")
        assert s.bytes == sum(rd.values()) + sum(wr.values())
        assert s.flops == sum(2 * m * n * kk for m, n, kk in rec["dots"]), s.name
        assert sorted(merged(*({d[:3]: d[3]} for d in s.dots)).items()) == \
            sorted(merged(*({d: 1} for d in rec["dots"])).items()), (s.name, "dot shapes")
        assert 0 < s.min_bytes <= s.bytes


def test_floor_times():
    """The floor is the larger of the memory and product times, at the stated rates (exact arithmetic on the
    counts: a stage of 4.8e9 bytes at 4.8 TB/s takes 1 ms)."""
    s = _floor.Stage("x", "_k", 1)
    s.rd("a", 4_800_000_000)
    s.dot(1000, 1000, 494_500, 1)   # 9.89e11 FLOPs: 1 ms at bf16, 2 ms at tf32, 6 ms at tf32 x 3
    assert s.floor_ms(4.8e12) == pytest.approx((1.0, 1.0, 1.0), rel=1e-12)
    s.rate, s.products = "tf32", 3
    assert s.floor_ms(4.8e12) == pytest.approx((1.0, 3 * 989 / 494, 3 * 989 / 494), rel=1e-12)
    s.scratch = ("a",)
    assert s.min_bytes == 0 and s.bytes == 4_800_000_000


def test_pass_bytes_are_the_sizes_of_the_inputs_and_outputs():
    """The floor of the whole pass, recomputed from the sizes :func:`_floor.plan` gives each tensor: the forward's
    inputs and output, the backward's inputs and gradients (the plan's names; dkp is dk's partial sum)."""
    for dtype, prec, nh in ((torch.bfloat16, None, 3), (torch.float32, "tf32x3", 1), (torch.float32, "tf32", 2)):
        shape = (3, 50, 2, 48, 40)
        sizes = {}
        for s in _floor.plan(dtype, nh, *shape, None, prec):
            sizes.update(s.sizes)
        fwd, bwd = _floor.pass_bytes(dtype, nh, *shape)
        assert fwd == sum(sizes[n] for n in ("q", "k", "v", "b", "o"))
        assert bwd == sum(sizes[n] for n in ("q", "k", "v", "b", "do", "dq", "dk", "dv", "db"))
