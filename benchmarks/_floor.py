"""The floor of every kernel of the chunked GH product (:mod:`lrnnkit.ops.gh.wy`): per stage of one forward and
backward, the bytes its Triton kernel moves -- as written (every ``tl.load`` / ``tl.store`` counted with its
repetitions: a tile loaded once per value block counts once per value block) and at the least (every tensor it
touches, once) --, the tensor-core FLOPs of its ``tl.dot`` calls (2 M N K per call, tile shapes as launched), and
the time those take at a given bandwidth and product rate: ``floor = max(bytes / bandwidth, FLOPs / rate)``.

:func:`plan` is the analytic count from the shapes and the kernel table (no gate, no initial or final-state
gradient: the benchmark's case; scalars and index tables counted too, so that the count is exact);
:class:`Stages` launches each stage's kernel on its own (the inputs it needs made once by a full forward and
backward), which is what ``bench_kernels.py --floor`` times on the GPU and what proofs_tests/ops/test_gh_floor.py
counts, load by load, in the Triton interpreter to check :func:`plan`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from lrnnkit.ops.gh import wy
from lrnnkit.ops.gh.wy_config import _settings, config_table, default_chunk
from lrnnkit.ops.gh.wy_grad import _dqk_wy_once_pass, _dqk_wy_pass, _dqkwg_pass, _wy_bwd_pass
from lrnnkit.ops.gh.wy_output import _output_pass
from lrnnkit.ops.gh.wy_state import _state_bwd_pass, _state_pass
from lrnnkit.ops.gh.wy_t import _t_pass

# H200 SXM: HBM3e 4.8 TB/s; dense tensor-core rates (no sparsity) in FLOP/s; float32 / float64 without tensor cores
H200 = {"bandwidth": 4.8e12, "bf16": 989e12, "fp16": 989e12, "tf32": 494e12, "ieee32": 67e12, "ieee64": 67e12}


@dataclass
class Stage:
    """One kernel launch: ``reads`` / ``writes`` map a tensor's name to the bytes its loads / stores move as
    written; ``sizes`` to the tensor's size in bytes; ``dots`` lists (M, N, K, calls); ``products`` is 3 for
    3xTF32 (three tensor-core products per ``tl.dot``), else 1; ``rate`` names the product rate (a key of
    :data:`H200`). ``scratch``: tensors the stage writes and reads back itself (not part of its least traffic)."""
    name: str
    kernel: str
    programs: int
    reads: dict = field(default_factory=dict)
    writes: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    dots: list = field(default_factory=list)
    products: int = 1
    rate: str = "bf16"
    scratch: tuple = ()

    def rd(self, name, nbytes, size=None):
        self.reads[name] = self.reads.get(name, 0) + nbytes
        self.sizes.setdefault(name, nbytes if size is None else size)

    def wr(self, name, nbytes, size=None):
        self.writes[name] = self.writes.get(name, 0) + nbytes
        self.sizes.setdefault(name, nbytes if size is None else size)

    def dot(self, M, N, K, calls):
        self.dots.append((M, N, K, calls))

    @property
    def bytes(self) -> int:
        """Bytes moved as written."""
        return sum(self.reads.values()) + sum(self.writes.values())

    @property
    def min_bytes(self) -> int:
        """Bytes at the least: every tensor the stage touches once, scratch left out."""
        return sum(n for t, n in self.sizes.items() if t not in self.scratch)

    @property
    def flops(self) -> int:
        """FLOPs of the ``tl.dot`` calls as launched (one product each; 3xTF32 runs ``products`` of them)."""
        return sum(2 * M * N * K * c for M, N, K, c in self.dots)

    def floor_ms(self, bandwidth: float, rates: dict = H200) -> tuple:
        """(memory ms at the least bytes, product ms, floor ms = the larger)."""
        mem = self.min_bytes / bandwidth * 1e3
        mma = self.flops * self.products / rates[self.rate] * 1e3
        return mem, mma, max(mem, mma)


def _size(dtype) -> int:
    return torch.tensor([], dtype=dtype).element_size()


def plan(dtype, nh, B, T, H, K, V, C=None, fp32_precision=None, cfg=None) -> list:
    """The stages of one forward + backward of ``chunk_gh`` (no gate, no initial state, no final-state gradient, B
    sequences of T tokens, K and V the widths the kernels run at: :func:`lrnnkit.ops.gh.wy_config._padded`
    decides those) in launch order, as :class:`Stage` counts. ``cfg``: the kernel table (default: the dtype's)."""
    C = C or default_chunk(dtype, fp32_precision)
    cfg = cfg or config_table(dtype, fp32_precision)
    DT, ACC, PREC, ST = wy._config(dtype, fp32_precision)
    e, st, acc = _size(dtype), _size(ST), _size(ACC)
    two = DT != ACC
    keep, fuse, once = bool(cfg["keep"]), bool(cfg["fuse"]), bool(cfg["once"])
    split = bool(cfg["split"]) or keep
    BK = max(16, 1 << (K - 1).bit_length())
    BVF = max(16, 1 << (V - 1).bit_length())
    BT = C
    N = B
    NC = math.ceil(T * nh / C)           # chunks per sequence
    NT = N * NC
    L = B * T * nh                       # positions
    tok = B * T                          # tokens
    blocked = ACC != torch.float64
    rate = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype) or \
        ("tf32" if PREC in ("tf32", "tf32x3") else ("ieee64" if ACC == torch.float64 else "ieee32"))
    products = 3 if PREC == "tf32x3" else 1
    sz = dict(q=tok * H * K * e, k=L * H * K * e, v=L * H * V * e, b=L * H * e, t=L * H * BT * st,
              h=NT * H * K * V * st, vn=L * H * V * st, o=tok * H * V * e, ht=N * H * K * V * acc,
              do=tok * H * V * e, dh=NT * H * K * V * st, dy=L * H * V * st, dv=L * H * V * e,
              dh0=N * H * K * V * acc, dq=tok * H * K * e, dk=L * H * K * e, db=L * H * e, dx=L * H * K * st,
              dkp=L * H * K * acc, chunks=NT * 2 * 4, seqs=N * 3 * 4, scale=acc)
    dkp = "dkp" if acc != e else "dk"    # float32 / float64: dk itself holds the partial sum

    def new(name, kernel, programs, scratch=()):
        return Stage(name, kernel, programs, products=products, rate=rate, scratch=scratch)

    def rd(s, name, times=1):
        s.rd(name, sz[name] * times, sz[name])

    def wr(s, name, times=1):
        s.wr(name, sz[name] * times, sz[name])

    def meta(s, programs, table, scale):   # index-table entries and the scale, loaded once per program
        s.rd(table, programs * (2 if table == "chunks" else 3) * 4, sz[table])
        if scale:
            s.rd("scale", programs * acc, acc)

    stages = []
    # 1. T pass: A = K diag(b) K^T (strictly lower), T = (I + A)^{-1} (blocked inverse: four products a merge)
    s = new("t", "_t_kernel", NT * H)
    meta(s, NT * H, "chunks", False)
    rd(s, "k")
    rd(s, "b")
    wr(s, "t")
    s.dot(BT, BT, BK, NT * H)
    merges = (BT > 16) + (cfg["t_sub"] < 16)   # tiles._tinv: four products a merge of diagonal blocks
    if blocked and merges:
        s.dot(BT, BT, BT, 4 * merges * NT * H)
    stages.append(s)

    def state(name, output, store, final):
        BV = _settings(cfg, "state_fwd" if output else "state_rec", two, BVF)[0]
        NV = math.ceil(V / BV)
        s = new(name, "_state_fwd_kernel", NV * N * H)
        meta(s, NV * N * H, "seqs", True)
        rd(s, "k", NV)
        rd(s, "t", NV)
        rd(s, "v")
        rd(s, "b", NV)
        calls = NV * NT * H
        s.dot(BT, BV, BK, calls)        # K S
        s.dot(BT, BV, BT, calls)        # U' = T (...)
        s.dot(BK, BV, BT, calls)        # S += K^T U'
        if output:
            rd(s, "q", NV)
            wr(s, "o")
            s.dot(BT, BT, BK, calls)    # Q K^T
            s.dot(BT, BV, BK, calls)    # Q S
            s.dot(BT, BV, BT, calls)    # M U'
        if store:
            wr(s, "h")
            wr(s, "vn")
        if final:
            wr(s, "ht")
        return s

    if split:
        stages.append(state("state_fwd_split", False, True, True))
        BV = _settings(cfg, "output", two, BVF)[0]
        NV = math.ceil(V / BV)
        s = new("output", "_output_kernel", NT * NV * H)
        meta(s, NT * NV * H, "chunks", True)
        rd(s, "k", NV)
        rd(s, "q", NV)
        rd(s, "h")
        rd(s, "vn")
        wr(s, "o")
        calls = NT * NV * H
        s.dot(BT, BT, BK, calls)
        s.dot(BT, BV, BK, calls)
        s.dot(BT, BV, BT, calls)
        stages.append(s)
    else:
        stages.append(state("state_fwd", True, False, True))
    if not keep:
        stages.append(state("state_rec", False, True, False))
    # 4. reverse state pass
    BV = _settings(cfg, "state_bwd", two, BVF)[0]
    NV = math.ceil(V / BV)
    s = new("state_bwd", "_state_bwd_kernel", NV * N * H)
    meta(s, NV * N * H, "seqs", True)
    wr(s, "dh")
    rd(s, "k", NV)
    rd(s, "q", NV)
    rd(s, "do")
    rd(s, "t", NV)
    rd(s, "b", NV)
    wr(s, "dy")
    if two:
        wr(s, "dv")
    wr(s, "dh0")
    calls = NV * NT * H
    for M_, N_, K_ in ((BT, BT, BK), (BT, BV, BT), (BT, BV, BK), (BT, BV, BT), (BK, BV, BT), (BK, BV, BT)):
        s.dot(M_, N_, K_, calls)
    stages.append(s)
    if fuse and once:   # every tile once: the whole key width one block, dk's partial sum in registers
        BV = _settings(cfg, "dqkwy_once", two, BVF)[0]
        NV = math.ceil(V / BV)
        s = new("dqkwy_once", "_dqk_wy_once_kernel", NT * H)
        meta(s, NT * H, "chunks", True)
        for name in ("b", "q", "k", "h", "dh", "vn", "do", "dy", "v", "t"):
            rd(s, name)
        if not two:
            wr(s, "dv")
        for name in ("dq", "dk", "db"):
            wr(s, name)
        P = NT * H
        s.dot(BT, BT, BV, 2 * NV * P)         # D += dO U'^T, dY Y^T
        s.dot(BT, BK, BV, 3 * NV * P)         # dO S^T, U' dS^T, dY S^T
        s.dot(BT, BK, BT, 4 * P)              # D K, D^T Q, P K, P^T (b K)
        s.dot(BT, BT, BK, 2 * P)              # dX X^T, K K^T
        s.dot(BT, BT, BT, P)                  # dT T^T
        stages.append(s)
    elif fuse:
        BV = _settings(cfg, "dqkwy", two, BVF)[0]
        NV = math.ceil(V / BV)
        BKW = min(BK, cfg["dqkwy_bk"])
        NKB = math.ceil(K / BKW)
        s = new("dqkwy", "_dqk_wy_kernel", NT * H, scratch=("dkp",))
        meta(s, NT * H, "chunks", True)
        rd(s, "b")
        rd(s, "vn", 1 + NKB)            # step 1, then once per key block (_state_terms)
        rd(s, "do", 1 + NKB)
        rd(s, "dy", 1 + NKB)
        rd(s, "v")
        if not two:
            wr(s, "dv")
        rd(s, "q")
        rd(s, "k", 2)                   # steps 2 and 3
        rd(s, "h")
        rd(s, "dh")
        wr(s, "dq")
        s.wr(dkp, sz["dkp"], sz["dkp"])
        rd(s, "t")
        s.rd(dkp, sz["dkp"], sz["dkp"])
        wr(s, "dk")
        wr(s, "db")
        P = NT * H
        s.dot(BT, BT, BV, 2 * NV * P)          # D += dO U'^T, dY Y^T
        s.dot(BT, BKW, BV, 3 * NKB * NV * P)   # dO S^T, U' dS^T, dY S^T
        s.dot(BT, BKW, BT, 2 * NKB * P)        # D K, D^T Q
        s.dot(BT, BT, BKW, NKB * P)            # dX X^T
        s.dot(BT, BT, BT, P)                   # dT T^T
        s.dot(BT, BT, BKW, NKB * P)            # K K^T
        s.dot(BT, BKW, BT, 2 * NKB * P)        # P K, P^T (b K)
        stages.append(s)
    else:
        BV = _settings(cfg, "dqkwg", two, BVF)[0]
        NV = math.ceil(V / BV)
        BKS = min(BK, cfg["dqkwg_bk"])
        NKB = math.ceil(K / BKS)
        s = new("dqkwg", "_dqkwg_kernel", NT * NKB * H)
        meta(s, NT * NKB * H, "chunks", True)
        rd(s, "q")
        rd(s, "k")
        rd(s, "h")
        rd(s, "dh")
        rd(s, "vn", NKB)
        rd(s, "dy", NKB)
        rd(s, "do", NKB)
        wr(s, "dq")
        s.wr(dkp, sz["dkp"], sz["dkp"])
        wr(s, "dx")
        P = NT * NKB * H
        s.dot(BT, BKS, BV, 3 * NV * P)
        s.dot(BT, BT, BV, NV * P)
        s.dot(BT, BKS, BT, 2 * P)
        stages.append(s)
        BV = _settings(cfg, "wy_bwd", two, BVF)[0]
        NV = math.ceil(V / BV)
        BKW = min(BK, cfg["wy_bk"])
        NKB = math.ceil(K / BKW)
        s = new("wy_bwd", "_wy_bwd_kernel", NT * H)
        meta(s, NT * H, "chunks", False)
        rd(s, "b")
        rd(s, "t")
        rd(s, "k", 2)
        rd(s, "dx", 2)
        rd(s, "dy")
        rd(s, "v")
        if not two:
            wr(s, "dv")
        s.rd(dkp, sz["dkp"], sz["dkp"])
        wr(s, "dk")
        wr(s, "db")
        P = NT * H
        s.dot(BT, BT, BKW, 2 * NKB * P)
        s.dot(BT, BT, BV, NV * P)
        s.dot(BT, BT, BT, P)
        s.dot(BT, BKW, BT, 2 * NKB * P)
        stages.append(s)
    return stages


def pass_bytes(dtype, nh, B, T, H, K, V) -> tuple:
    """(forward, backward) bytes that no arrangement of kernels can avoid: the forward reads q, k, v, beta once and
    writes o once; the backward reads q, k, v, beta and dO once and writes dq, dk, dv, dbeta once (no gate, no
    initial or final state; every intermediate -- T, the chunk states, U' -- is a choice of the kernels, left out)."""
    e = _size(dtype)
    tok, pos = B * T * H, B * T * nh * H
    ins = tok * K + pos * (K + V + 1)
    return (ins + tok * V) * e, (ins + tok * V + ins) * e


class Stages:
    """Each stage of one forward + backward of ``chunk_gh`` launched on its own (no gate, no initial state): the
    inputs every stage needs come from one full forward and backward at construction. ``run[name]()`` launches that
    stage's kernel once and returns the tensors it wrote, by the names :func:`plan` uses; ``named`` holds every
    other tensor by name (the test maps addresses to names with it)."""

    def __init__(self, q, k, v, beta, do, nh, chunk_size=None, fp32_precision=None):
        dtype = q.dtype
        C = chunk_size or default_chunk(dtype, fp32_precision, q.shape[-1], v.shape[-1], q.device)
        c = wy._Ctx(q, k, v, None, None, C, fp32_precision)
        self.c = c
        scale_t = wy._scale_tensor(1.0, c.ACC, q.device)
        qf, kf, vf, bf, _ = wy._flat(q, k, v, beta, None)
        dof = do.to(dtype).contiguous().reshape(-1, c.H, c.V)
        Gc, tm = _t_pass(c, kf, bf, None)
        _, _, h, vn = _state_pass(c, qf, kf, vf, bf, tm, Gc, None, scale_t, False, True, False)
        L = kf.shape[0]
        two = c.DT != c.ACC
        dv = torch.empty(L, c.H, c.V, dtype=v.dtype, device=c.dev)
        dh, dy, dh0 = _state_bwd_pass(c, qf, kf, bf, tm, Gc, dof, None, h, vn, dv, two, scale_t)
        dq = torch.empty(c.Ltok, c.H, c.K, dtype=dtype, device=c.dev)
        dk = torch.empty(L, c.H, c.K, dtype=dtype, device=c.dev)
        db = torch.empty(L, c.H, dtype=dtype, device=c.dev)
        dkp = dk if dk.dtype == c.ACC else torch.empty(L, c.H, c.K, dtype=c.ACC, device=c.dev)
        dx, NKB = None, 0    # the two-kernel backward's dX: only where the table does not fuse the two
        if not c.cfg["fuse"]:
            dx, _, NKB = _dqkwg_pass(c, qf, kf, Gc, h, dh, vn, dy, dof, dq, dkp, scale_t)
        self.named = dict(q=qf, k=kf, v=vf, b=bf, t=tm, h=h, vn=vn, do=dof, dh=dh, dy=dy, dv=dv, dh0=dh0, dq=dq,
                          dk=dk, db=db, dx=dx, dkp=dkp, chunks=c.chunks, seqs=c.seqs, scale=scale_t)
        n = self.named
        self.aliases = {"dkp": "dk"} if dkp is dk else {}   # float32 / float64: dk holds its own partial sum
        pick = lambda names, xs: {k_: x for k_, x in zip(names, xs) if x is not None}  # noqa: E731
        self.run = {
            "t": lambda: dict(t=_t_pass(c, kf, bf, None)[1]),
            "state_fwd": lambda: pick(("o", "ht"), _state_pass(c, qf, kf, vf, bf, tm, None, None, scale_t, True,
                                                               False, True)),
            "state_fwd_split": lambda: pick(("o", "ht", "h", "vn"), _state_pass(c, qf, kf, vf, bf, tm, None, None,
                                                                                scale_t, False, True, True)),
            "state_rec": lambda: pick(("o", "ht", "h", "vn"), _state_pass(c, qf, kf, vf, bf, tm, None, None,
                                                                          scale_t, False, True, False))}
        self.run["output"] = lambda: dict(o=_output_pass(c, qf, kf, None, n["h"], n["vn"], scale_t))
        self.run["state_bwd"] = lambda: dict(zip(("dh", "dy", "dh0"), _state_bwd_pass(
            c, qf, kf, bf, tm, None, dof, None, n["h"], n["vn"], n["dv"], two, scale_t)))

        def dqkwy():
            _dqk_wy_pass(c, qf, kf, vf, bf, None, tm, n["h"], n["dh"], n["vn"], n["dy"], dof, n["dq"], n["dkp"],
                         n["dk"], n["dv"], n["db"], None, scale_t, not two)
            return {}

        def dqkwg():
            dx_, _, _ = _dqkwg_pass(c, qf, kf, None, n["h"], n["dh"], n["vn"], n["dy"], dof, n["dq"], n["dkp"],
                                    scale_t)
            return dict(dx=dx_)

        def wy_bwd():
            _wy_bwd_pass(c, kf, vf, bf, None, tm, n["dx"], n["dy"], n["dkp"], None, NKB, n["dk"], n["dv"], n["db"],
                         None, not two)
            return {}
        def dqkwy_once():
            _dqk_wy_once_pass(c, qf, kf, vf, bf, None, tm, n["h"], n["dh"], n["vn"], n["dy"], dof, n["dq"], n["dk"],
                              n["dv"], n["db"], None, scale_t, not two)
            return {}
        self.run.update(dqkwy=dqkwy, dqkwg=dqkwg, wy_bwd=wy_bwd, dqkwy_once=dqkwy_once)


def inputs(nh, B, T, H, K, V, dtype, device, seed=0):
    """(q, k, v, beta, do) of the benchmark: unit keys, beta in [0, 2], everything else standard normal."""
    g = torch.Generator(device=device).manual_seed(seed)
    r = lambda *s: torch.randn(*s, device=device, generator=g)  # noqa: E731
    q = r(B, T, H, K)
    k = torch.nn.functional.normalize(r(B, T, nh, H, K), dim=-1)
    v = r(B, T, nh, H, V)
    beta = 2 * torch.rand(B, T, nh, H, device=device, generator=g)
    do = r(B, T, H, V)
    return [x.to(dtype) for x in (q, k, v, beta, do)]


def measure(dtype, nh, shape, bench, bandwidth, device, fp32_precision=None, rates=H200) -> list:
    """One row per stage of one forward + backward at ``shape`` = (B, T, H, K, V): the counts of :func:`plan`, the
    floor at ``bandwidth`` (bytes / s) and ``rates``, and the stage's kernel timed on its own by ``bench`` (a
    callable -> ms), with the distance measured / floor."""
    B, T, H, K, V = shape
    q, k, v, beta, do = inputs(nh, B, T, H, K, V, dtype, device)
    st = Stages(q, k, v, beta, do, nh, None, fp32_precision)
    rows = []
    for s in plan(dtype, nh, B, T, H, st.c.K, st.c.V, st.c.BT, fp32_precision, st.c.cfg):
        ms = bench(st.run[s.name])
        mem, mma, floor = s.floor_ms(bandwidth, rates)
        rows.append(dict(stage=s.name, kernel=s.kernel, programs=s.programs, bytes=s.bytes, min_bytes=s.min_bytes,
                         flops=s.flops, products=s.products, rate=s.rate, mem_ms=mem, mma_ms=mma, floor_ms=floor,
                         written_ms=s.bytes / bandwidth * 1e3, ms=ms, distance=ms / floor))
    return rows
