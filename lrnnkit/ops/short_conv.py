"""``ShortConvolution``: the causal depthwise convolution in front of the q / k / v streams of DeltaNet-style layers
(fla's ``ShortConvolution``, same parameter names and shapes, so state dicts move between the two).

For channels c and a window of ``kernel_size = W`` taps, with x taken as 0 before the start of each sequence::

    z_{t,c} = b_c + sum_{s=0}^{W-1} w_{c, W-1-s} x_{t-s, c},        y_{t,c} = act(z_{t,c})     act = SiLU or identity

``weight`` has shape (C, 1, W) as an ``nn.Conv1d(C, C, W, groups=C)``; the last tap multiplies the current token.
Packed sequences (``cu_seqlens``, B = 1) are reset at every boundary: no tap reads across one.

Incremental decoding keeps fla's convolution state: per sequence n the last W inputs before the activation,
``cache`` (N, C, W), ``cache[n, :, W - 1]`` the newest (zeros before the start), exactly what fla's
``causal_conv1d`` returns as its final state and what fla's ``causal_conv1d_update`` reads and rolls. With a
cache, the taps that reach before a sequence's start read it: x_{t-s} with t - s < 0 is ``cache[n, :, W + t - s]``
(:func:`causal_conv_cached`, :meth:`ShortConvolution.forward_cached`); a decode step (one token per sequence) is
``window = [cache[..., 1:], x_t]``, ``y_t = act(sum_w window_w * weight_w + b)``, ``cache <- window`` (on CUDA
one Triton launch that rolls the cache in place, as fla's ``causal_conv1d_update``; :func:`conv_step` in torch
beside it).

Two implementations of the same equations: :func:`causal_conv_torch` (the torch reference, any device and dtype,
autograd) and :func:`causal_conv_triton` (one Triton pass forward, one backward, on the (B, T, C) layout the
projections produce, fp32 accumulation, output in x's dtype; its backward recomputes z once, in a first pass
that writes dz in fp32). ``backend="auto"`` runs
Triton on CUDA tensors (float64 excepted: it keeps the reference's float64 arithmetic) and the reference elsewhere. The backward of the Triton path::

    dz_{t,c} = dy_{t,c} act'(z_{t,c}),   dx_{t,c} = sum_r w_{c,W-1-r} dz_{t+r,c},   dw_{c,W-1-s} = sum_t dz_{t,c} x_{t-s,c}

(sums over positions of the same sequence only), with dw reduced over position blocks in torch.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..errors import InputError

BACKENDS = ("auto", "triton", "torch")


def _local_positions(cu_seqlens: torch.Tensor | None, T: int, device) -> torch.Tensor | None:
    """Index of every position inside its own packed sequence (int32, (T,)), or None without packing."""
    if cu_seqlens is None or len(cu_seqlens) <= 2:
        return None
    pos = torch.arange(T, device=device)
    cu = cu_seqlens.to(device=device, dtype=torch.long)
    seq = torch.searchsorted(cu[1:], pos, right=True)
    return (pos - cu[:-1][seq]).to(torch.int32)


def causal_conv_torch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                      activation: str | None = "silu", cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:
    """The reference: x (B, T, C), weight (C, 1, W), bias (C,) or None -> y (B, T, C) (module text)."""
    B, T, C = x.shape
    W = weight.shape[-1]
    w = weight.to(x.dtype)
    local = _local_positions(cu_seqlens, T, x.device)
    if local is None:
        y = F.conv1d(F.pad(x.transpose(1, 2), (W - 1, 0)), w, None, groups=C).transpose(1, 2)
    else:
        y = 0
        for s in range(W):                                          # tap s reads x_{t-s}
            shifted = F.pad(x, (0, 0, s, 0))[:, :T] if s else x
            y = y + shifted * (local >= s).to(x.dtype)[None, :, None] * w[:, 0, W - 1 - s]
    if bias is not None:
        y = y + bias.to(y.dtype)
    return F.silu(y) if activation else y


def _sequences(x: torch.Tensor, cu_seqlens):
    """(positions inside their sequence (T,) or (B, T), sequence of each position (T,) or (B, T), lengths (N,),
    starts (N,)) for a (B, T, C) input, packed (``cu_seqlens``, B = 1) or not."""
    B, T, _ = x.shape
    pos = torch.arange(T, device=x.device)
    if cu_seqlens is None:
        seq = torch.arange(B, device=x.device)[:, None].expand(B, T)
        return pos.expand(B, T), seq, torch.full((B,), T, device=x.device), torch.arange(B, device=x.device) * T
    cu = cu_seqlens.to(device=x.device, dtype=torch.long)
    seq = torch.searchsorted(cu[1:], pos, right=True)
    return pos - cu[:-1][seq], seq, cu[1:] - cu[:-1], cu[:-1]


def causal_conv_cached(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: str | None,
                       cu_seqlens: torch.Tensor | None, cache: torch.Tensor | None) -> torch.Tensor:
    """The reference with a convolution state: the taps before a sequence's start read ``cache`` (N, C, W) (module
    text) instead of zeros. torch, any device, autograd."""
    B, T, C = x.shape
    W = weight.shape[-1]
    w = weight.to(x.dtype)
    local, seq, _, _ = _sequences(x, cu_seqlens)
    flat = x.reshape(B * T, C)
    row = torch.arange(B * T, device=x.device).reshape(B, T)
    hist = None if cache is None else cache.to(x.dtype).transpose(1, 2)          # (N, W, C)
    local = local.reshape(B, T)
    seq = seq.reshape(B, T)
    y = 0
    for s in range(W):                                                           # tap s reads x_{t-s}
        inside = (local >= s)[..., None]
        u = flat[(row - s).clamp(min=0)] * inside
        if hist is not None and s:
            u = u + hist[seq, (W + local - s).clamp(max=W - 1)] * ~inside
        y = y + u * w[:, 0, W - 1 - s]
    if bias is not None:
        y = y + bias.to(y.dtype)
    return F.silu(y) if activation else y


def conv_final_state(x: torch.Tensor, W: int, cu_seqlens: torch.Tensor | None,
                     cache: torch.Tensor | None) -> torch.Tensor:
    """fla's final convolution state (N, C, W) after the inputs x: per sequence its last W inputs, the newest at
    index W - 1; where the sequence is shorter than W, the older entries come from ``cache`` (zeros without)."""
    B, T, C = x.shape
    _, _, lens, starts = _sequences(x, cu_seqlens)
    j = lens[:, None] - W + torch.arange(W, device=x.device)                     # local position of entry w
    flat = F.pad(x.reshape(B * T, C), (0, 0, 0, 1))                              # a zero row: T = 0 works
    got = flat[(starts[:, None] + j).clamp(min=0, max=B * T)] * (j >= 0)[..., None]                # (N, W, C)
    if cache is not None:
        got = got + cache.to(x.dtype).transpose(1, 2).gather(
            1, (W + j).clamp(max=W - 1)[..., None].expand(-1, -1, C)) * (j < 0)[..., None]
    return got.transpose(1, 2).contiguous()


def conv_step(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: str | None,
              cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per sequence: x (N, C), cache (N, C, W) -> (y (N, C), the rolled cache (N, C, W)) (module text)."""
    window = torch.cat([cache[..., 1:], x.to(cache.dtype)[..., None]], -1)
    y = (window.to(x.dtype) * weight[:, 0].to(x.dtype)).sum(-1)
    if bias is not None:
        y = y + bias.to(y.dtype)
    return (F.silu(y) if activation else y), window


# ------------------------------------------------------------------------------------------------ Triton
_KERNELS = None

# Block sizes (positions BT x channels BC) and warps of the two passes, the fastest pair of a sweep on an H100
# (benchmarks/bench_layer_vs_fla.py --parts stages).
BLOCKS = {"fwd": (64, 64, 4), "bwd": (64, 64, 4)}


def _kernels():
    """Compile-on-first-use: the Triton kernels (imported lazily, as every kernel module of lrnnkit)."""
    global _KERNELS
    if _KERNELS is not None:
        return _KERNELS
    from ._triton import tl, triton

    @triton.jit
    def short_conv_fwd(x, w, b, loc, y, dy, T, C, RPR, W: tl.constexpr, BT: tl.constexpr, BC: tl.constexpr,
            HAS_B: tl.constexpr, HAS_LOC: tl.constexpr, ACT: tl.constexpr, GRAD: tl.constexpr):
        """z = conv(x) + b; y = act(z), or with GRAD the backward's first pass dz = dy act'(z) (fp32 out). Rows
        r RPR .. r RPR + RPR - 1 take run r's taps (w: (runs, C, W))."""
        i_t, i_c, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        o_t = i_t * BT + tl.arange(0, BT)
        o_c = i_c * BC + tl.arange(0, BC)
        m_t, m_c = o_t < T, o_c < C
        base = i_b.to(tl.int64) * T * C
        w = w + (i_b // RPR).to(tl.int64) * C * W
        if HAS_LOC:
            l_t = tl.load(loc + o_t, mask=m_t, other=0)
        else:
            l_t = o_t
        acc = tl.zeros([BT, BC], dtype=tl.float32)
        for s in tl.static_range(W):
            ok = m_t & (l_t >= s)
            xs = tl.load(x + base + (o_t - s)[:, None] * C + o_c[None, :], mask=ok[:, None] & m_c[None, :], other=0)
            ws = tl.load(w + o_c * W + (W - 1 - s), mask=m_c, other=0)
            acc += xs.to(tl.float32) * ws.to(tl.float32)[None, :]
        if HAS_B:
            acc += tl.load(b + o_c, mask=m_c, other=0).to(tl.float32)[None, :]
        m = m_t[:, None] & m_c[None, :]
        if GRAD:
            g = tl.load(dy + base + o_t[:, None] * C + o_c[None, :], mask=m, other=0).to(tl.float32)
            sg = tl.sigmoid(acc)
            tl.store(y + base + o_t[:, None] * C + o_c[None, :], g * sg * (1 + acc * (1 - sg)), mask=m)
        else:
            if ACT:
                acc = acc * tl.sigmoid(acc)
            tl.store(y + base + o_t[:, None] * C + o_c[None, :], acc.to(y.dtype.element_ty), mask=m)

    @triton.jit
    def short_conv_bwd(x, w, loc, dz, dx, dwp, dbp, T, C, NT, RPR, W: tl.constexpr, BT: tl.constexpr, BC: tl.constexpr,
            HAS_B: tl.constexpr, HAS_LOC: tl.constexpr):
        """dx_t = sum_r w_{W-1-r} dz_{t+r}; per block the partial sums dw_{W-1-r} = sum_t dz_{t+r} x_t, db = sum dz
        (row i_b's run: i_b // RPR)."""
        i_t, i_c, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
        o_t = i_t * BT + tl.arange(0, BT)
        o_c = i_c * BC + tl.arange(0, BC)
        m_t, m_c = o_t < T, o_c < C
        base = i_b.to(tl.int64) * T * C
        w = w + (i_b // RPR).to(tl.int64) * C * W
        if HAS_LOC:
            l_t = tl.load(loc + o_t, mask=m_t, other=0)
        row = (i_b * NT + i_t).to(tl.int64) * C
        xt = tl.load(x + base + o_t[:, None] * C + o_c[None, :], mask=m_t[:, None] & m_c[None, :],
                     other=0).to(tl.float32)
        acc_dx = tl.zeros([BT, BC], dtype=tl.float32)
        for r in tl.static_range(W):            # y_{t+r} reads x_t through tap r (weight column W-1-r)
            o_u = o_t + r
            m_u = o_u < T
            if HAS_LOC:                         # and t + r in t's own sequence
                l_u = tl.load(loc + o_u, mask=m_u, other=0)
                m_u = m_u & (l_u - l_t == r)
            g = tl.load(dz + base + o_u[:, None] * C + o_c[None, :], mask=m_u[:, None] & m_c[None, :], other=0)
            wr = tl.load(w + o_c * W + (W - 1 - r), mask=m_c, other=0).to(tl.float32)
            acc_dx += g * wr[None, :]
            tl.store(dwp + row * W + o_c * W + (W - 1 - r), tl.sum(g * xt, 0), mask=m_c)
            if HAS_B and r == 0:
                tl.store(dbp + row + o_c, tl.sum(g, 0), mask=m_c)
        tl.store(dx + base + o_t[:, None] * C + o_c[None, :], acc_dx.to(dx.dtype.element_ty),
                 mask=m_t[:, None] & m_c[None, :])

    _KERNELS = (short_conv_fwd, short_conv_bwd)
    return _KERNELS


_STEP = None


def _step_kernel():
    """Compile-on-first-use: the decode step, one token per sequence, the window rolled in place."""
    global _STEP
    if _STEP is not None:
        return _STEP
    from ._triton import tl, triton

    @triton.jit
    def step(x, w, b, cache, y, C, W: tl.constexpr, BW: tl.constexpr, BC: tl.constexpr, HAS_B: tl.constexpr,
             ACT: tl.constexpr, ACC: tl.constexpr):
        """window = [cache[n, c, 1:], x[n, c]]; y = act(window . w[c] + b[c]); cache[n, c, :] = window."""
        i_n, i_c = tl.program_id(0).to(tl.int64), tl.program_id(1)
        o_c = i_c * BC + tl.arange(0, BC)
        o_w = tl.arange(0, BW)
        m_c = o_c < C
        m_w = o_w < W
        base = cache + i_n * C * W + o_c[:, None] * W
        win = tl.load(base + o_w[None, :] + 1, mask=m_c[:, None] & (o_w[None, :] + 1 < W), other=0)
        xt = tl.load(x + i_n * C + o_c, mask=m_c, other=0)
        win = tl.where((o_w == W - 1)[None, :], xt[:, None].to(win.dtype), win)
        wc = tl.load(w + o_c[:, None] * W + o_w[None, :], mask=m_c[:, None] & m_w[None, :], other=0)
        acc = tl.sum(win.to(ACC) * wc.to(ACC), 1)
        if HAS_B:
            acc += tl.load(b + o_c, mask=m_c, other=0).to(ACC)
        if ACT:
            acc = acc * tl.sigmoid(acc)
        tl.store(y + i_n * C + o_c, acc.to(y.dtype.element_ty), mask=m_c)
        tl.store(base + o_w[None, :], win, mask=m_c[:, None] & m_w[None, :])

    _STEP = step
    return _STEP


def conv_step_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: str | None,
                     cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`conv_step` in one Triton launch, fp32 accumulation (float64 for float64), the cache (N, C, W) rolled
    in place (as fla's ``causal_conv1d_update``) and returned. No backward (decoding)."""
    from ._triton import TL_DTYPE, check_device, triton
    check_device(x, weight, bias, cache)
    N, C = x.shape
    W = weight.shape[-1]
    if not cache.is_contiguous():
        raise InputError("conv_step_triton: the cache must be contiguous (it is updated in place)")
    BC = min(128, triton.next_power_of_2(C))
    y = torch.empty_like(x)
    _step_kernel()[(N, triton.cdiv(C, BC))](x.contiguous(), weight.reshape(C, W).contiguous(),
                                            weight if bias is None else bias, cache, y, C, W,
                                            triton.next_power_of_2(W), BC, bias is not None, bool(activation),
                                            TL_DTYPE[torch.float64 if x.dtype == torch.float64 else torch.float32])
    return y, cache


def _blocks(which: str, T: int, C: int):
    from ._triton import triton
    BT, BC, warps = BLOCKS[which]
    return min(BT, triton.next_power_of_2(max(T, 1))), min(BC, triton.next_power_of_2(max(C, 1))), warps


def _conv_pass(x, w, bias, local, y, dy, act: bool, grad: bool):
    """One launch of the forward kernel: y = act(conv(x)) or, with ``grad``, y = dz (the backward's first pass);
    ``w`` (runs, C, W), the rows of ``x`` in run order."""
    from ._triton import triton
    B, T, C = x.shape
    BT, BC, warps = _blocks("fwd", T, C)
    fwd, _ = _kernels()
    fwd[(triton.cdiv(T, BT), triton.cdiv(C, BC), B)](
        x, w, w if bias is None else bias, x if local is None else local, y, x if dy is None else dy, T, C,
        B // w.shape[0], w.shape[-1], BT, BC, bias is not None, local is not None, act, grad, num_warps=warps)


class _CausalConvFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, local, act, runs=1):
        B, T, C = x.shape
        W = weight.shape[-1]
        x = x.contiguous()
        w = weight.reshape(runs, C, W).contiguous()
        y = torch.empty_like(x)
        _conv_pass(x, w, bias, local, y, None, act, False)
        ctx.save_for_backward(x, w, bias, local)
        ctx.act, ctx.wshape = act, weight.shape
        return y

    @staticmethod
    def backward(ctx, dy):
        """Two passes: dz = dy act'(z) with z recomputed (fp32; dz = dy without the activation), then dx and the
        per-block weight / bias partial sums, reduced over blocks in torch."""
        x, w, bias, local = ctx.saved_tensors
        B, T, C = x.shape
        R, W = w.shape[0], w.shape[-1]
        dy = dy.contiguous()
        if ctx.act:
            dz = torch.empty(B, T, C, dtype=torch.float32, device=x.device)
            _conv_pass(x, w, bias, local, dz, dy, True, True)
        else:
            dz = dy
        from ._triton import triton
        BT, BC, warps = _blocks("bwd", T, C)
        NT = triton.cdiv(T, BT)
        dx = torch.empty_like(x)
        dwp = torch.empty(B * NT, C, W, dtype=torch.float32, device=x.device)
        dbp = torch.empty(B * NT, C, dtype=torch.float32, device=x.device) if bias is not None else dwp
        _, bwd = _kernels()
        bwd[(NT, triton.cdiv(C, BC), B)](x, w, x if local is None else local, dz, dx, dwp, dbp, T, C, NT, B // R, W,
                                          BT, BC, bias is not None, local is not None, num_warps=warps)
        dw = dwp.reshape(R, -1, C, W).sum(1).reshape(ctx.wshape).to(w.dtype)     # each run's rows, summed
        db = dbp.sum(0).to(bias.dtype) if bias is not None else None
        return dx, dw, db, None, None, None


def causal_conv_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                       activation: str | None = "silu", cu_seqlens: torch.Tensor | None = None) -> torch.Tensor:
    """The Triton path of :func:`causal_conv_torch` (same contract), differentiable in x, weight and bias."""
    from ._triton import check_device
    check_device(x, weight, bias)
    local = _local_positions(cu_seqlens, x.shape[1], x.device)
    return _CausalConvFn.apply(x, weight, bias, local, bool(activation))


def causal_conv_runs_torch(x: torch.Tensor, weight: torch.Tensor, activation: str | None = "silu",
                           conv=causal_conv_torch) -> torch.Tensor:
    """R runs' short convolutions at once, each with its own taps: ``x`` (R, B, T, C), ``weight`` (R, C, 1, W) (or
    (R, C, W)); run r's rows convolved with ``weight[r]`` (no bias, no packed sequences). The reference of
    :func:`causal_conv_runs`: the runs' channels side by side, (R, B, T, C) -> (B, T, R C), one depthwise
    convolution ``conv`` (:func:`causal_conv_torch`, or :func:`causal_conv_triton` for its kernels on this
    layout) and back, a layout copy each way."""
    R, B, T, C = x.shape
    xs = x.permute(1, 2, 0, 3).reshape(B, T, R * C)
    y = conv(xs, weight.reshape(R * C, 1, weight.shape[-1]), None, activation)
    return y.reshape(B, T, R, C).permute(2, 0, 1, 3)


def causal_conv_runs(x: torch.Tensor, weight: torch.Tensor, activation: str | None = "silu") -> torch.Tensor:
    """The Triton path of :func:`causal_conv_runs_torch` (same contract), differentiable in x and weight: the
    kernels of :func:`causal_conv_triton` over the R B rows in place, row ``r B + b`` reading run r's taps (no
    layout change of x or y; each run's weight gradient is the sum over its own rows)."""
    from ._triton import check_device
    check_device(x, weight)
    R, B, T, C = x.shape
    y = _CausalConvFn.apply(x.reshape(R * B, T, C), weight, None, None, bool(activation), R)
    return y.reshape(R, B, T, C)
