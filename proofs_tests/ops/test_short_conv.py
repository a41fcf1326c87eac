"""The short causal convolution (:mod:`lrnnkit.ops.short_conv`): the Triton kernels (forward and backward)
against the torch reference, values and every gradient, with and without packed sequences; the module's
parameter layout (fla's ``ShortConvolution``). On a CPU the kernels run in the Triton interpreter; on a GPU
compiled (bf16 included)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.layers.short_conv import ShortConvolution
from lrnnkit.ops.short_conv import causal_conv_torch, causal_conv_triton

DEV = "cpu" if INTERPRET else "cuda"


def _pair(B, T, C, W, bias, act, cu, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, C, generator=g, dtype=torch.float64)
    w = torch.randn(C, 1, W, generator=g, dtype=torch.float64) / W
    b = torch.randn(C, generator=g, dtype=torch.float64) if bias else None
    dy = torch.randn(B, T, C, generator=g, dtype=torch.float64)
    ins = [x.to(DEV, dtype), w.to(DEV, torch.float32)] + ([b.to(DEV, torch.float32)] if bias else [])
    ref = [t.detach().clone().double().requires_grad_(True) for t in ins]
    ins = [t.detach().clone().requires_grad_(True) for t in ins]
    cu_d = None if cu is None else torch.tensor(cu, device=DEV)
    y = causal_conv_triton(ins[0], ins[1], ins[2] if bias else None, act, cu_d)
    y0 = causal_conv_torch(ref[0], ref[1], ref[2] if bias else None, act, cu_d)
    gy = torch.autograd.grad(y, ins, dy.to(DEV, y.dtype))
    g0 = torch.autograd.grad(y0, ref, dy.to(DEV))
    return y, y0, gy, g0


def _close(a, b, rtol):
    a, b = a.double(), b.double()
    err = float((a - b).norm() / b.norm().clamp_min(1e-30))
    assert err <= rtol, (err, rtol)


@settings(max_examples=12 if INTERPRET else 60, deadline=None)
@given(B=st.integers(1, 2), T=st.integers(1, 70), C=st.integers(1, 40), W=st.integers(1, 5), bias=st.booleans(),
       act=st.sampled_from(["silu", None]), seed=st.integers(0, 99))
def test_matches_reference(B, T, C, W, bias, act, seed):
    # float32 inputs, fp32 accumulation against the float64 reference: relative L2 error <= 1e-5 (a sum of W
    # products, each rounded once to fp32, plus the silu; 2^-24 relative per operation)
    y, y0, gy, g0 = _pair(B, T, C, W, bias, act, None, torch.float32, seed)
    _close(y, y0, 1e-5)
    for a, b in zip(gy, g0):
        _close(a, b, 1e-5)


@pytest.mark.parametrize("cu", [[0, 4, 9], [0, 1, 2, 9], [0, 9]])
def test_packed_sequences(cu):
    # no tap reads across a boundary: the same result as each sequence alone
    y, y0, gy, g0 = _pair(1, 9, 6, 4, True, "silu", cu, torch.float32, 3)
    _close(y, y0, 1e-5)
    for a, b in zip(gy, g0):
        _close(a, b, 1e-5)
    x = torch.randn(1, 9, 6, device=DEV)
    w = torch.randn(6, 1, 4, device=DEV)
    whole = causal_conv_triton(x, w, None, "silu", torch.tensor(cu, device=DEV))
    alone = torch.cat([causal_conv_triton(x[:, a:b], w, None, "silu") for a, b in zip(cu[:-1], cu[1:])], 1)
    _close(whole, alone, 1e-6)


@pytest.mark.skipif(INTERPRET, reason="bf16 tiles matter compiled; the interpreter computes them in fp32")
@pytest.mark.parametrize("T,C", [(128, 384), (128, 768), (200, 1000)])
def test_bf16_compiled(T, C):
    # bf16 in and out, fp32 inside: output and dx carry one bf16 rounding (2^-8 relative), dw sums B T products
    y, y0, gy, g0 = _pair(2, T, C, 4, True, "silu", None, torch.bfloat16, 7)
    _close(y, y0, 8e-3)
    _close(gy[0], g0[0], 8e-3)
    for a, b in zip(gy[1:], g0[1:]):
        _close(a, b, 8e-3)


def test_module_layout_and_backends():
    m = ShortConvolution(12, 4, bias=True)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == {"weight": (12, 1, 4), "bias": (12,)}
    x = torch.randn(2, 5, 12)
    a = ShortConvolution(12, 4, backend="torch")
    b = ShortConvolution(12, 4, backend="triton").to(DEV)
    b.load_state_dict(a.state_dict())
    _close(b(x.to(DEV)).cpu(), a(x), 1e-5)
    with pytest.raises(InputError, match="backend"):
        ShortConvolution(4, backend="cuda")
    with pytest.raises(InputError, match="activation"):
        ShortConvolution(4, activation="relu")
    with pytest.raises(InputError, match="kernel_size"):
        ShortConvolution(4, kernel_size=0)


# ------------------------------------------------------------------------------------------ decoding state
@pytest.mark.parametrize("W", [1, 3, 4])
@pytest.mark.parametrize("packed", [False, True])
def test_state_carries_the_convolution(W, packed):
    """fla's convolution state (N, C, W): a prompt with the final state out, then the rest from it (in one piece,
    or one token at a time with the window rolled) equals the convolution of the whole sequence (float64: the
    same products, summed in another order, 1e-14); the state is the last W inputs, zeros before the start."""
    conv = ShortConvolution(6, W, bias=True).double()
    g = torch.Generator().manual_seed(W)
    lens = [5, 1, 0, 7] if packed else [9, 9]
    xs = [torch.randn(n, 6, generator=g, dtype=torch.float64) for n in lens]
    with torch.no_grad():
        for cut in (0, 1, 3):
            heads = [x[:cut] for x in xs]
            tails = [x[cut:] for x in xs]
            if packed:
                cu = torch.tensor([0] + [sum(len(h) for h in heads[:i + 1]) for i in range(len(heads))])
                y1, st = conv.forward_cached(torch.cat(heads)[None], None, True, cu)
                y1 = [y1[0, a:b] for a, b in zip(cu[:-1], cu[1:])]
            else:
                y1, st = conv.forward_cached(torch.stack(heads), None, True)
            assert st.shape == (len(xs), 6, W)
            for n, h in enumerate(heads):     # the last W inputs, zeros before the start
                want = torch.cat([torch.zeros(max(0, W - len(h)), 6, dtype=torch.float64), h[-W:] if W <= len(h)
                                  else h]).T
                assert torch.equal(st[n], want)
            for n, x in enumerate(xs):
                whole = conv(x[None])[0] if len(x) else x
                assert float((y1[n] - whole[:cut]).abs().sum()) <= 1e-14 * max(1, y1[n].numel())
                one = st[n:n + 1].clone()
                for t in range(cut, len(x)):  # one token at a time, rolled in place or not
                    y, one = conv.forward_cached(x[t][None, None], one, True, one_token=True)
                    assert float((y[0, 0] - whole[t]).abs().max()) <= 1e-14
            if not packed:
                y2, _ = conv.forward_cached(torch.stack(tails), st, True)
                for n, x in enumerate(xs):
                    assert float((y2[n] - conv(x[None])[0][cut:]).abs().max()) <= 1e-14


@pytest.mark.triton
@pytest.mark.parametrize("dtype,rel", [(torch.float32, 2.0 ** -20), (torch.bfloat16, 2.0 ** -7)])
def test_triton_step_is_the_torch_step(dtype, rel):
    """The Triton decode step against the step in float64: fp32 accumulation of W terms (2^-20 of the sum of their
    magnitudes covers W + 4 roundings of 2^-24 through SiLU, whose slope is below 1.1) and one rounding to the
    output dtype (the interpreter truncates: one ulp, 2^-7 relative in bf16, 2^-20 allowed in fp32); the cache rolled
    in place, exactly."""
    from lrnnkit.ops.short_conv import conv_step, conv_step_triton
    g = torch.Generator().manual_seed(3)
    for C, W, bias, act in ((5, 4, True, "silu"), (130, 3, False, None), (16, 1, True, "silu")):
        x, w = torch.randn(3, C, generator=g).to(dtype), torch.randn(C, 1, W, generator=g).to(dtype)
        b = torch.randn(C, generator=g).to(dtype) if bias else None
        cache = torch.randn(3, C, W, generator=g).to(dtype)
        y0, c0 = conv_step(x.double(), w.double(), None if b is None else b.double(), act, cache.double())
        c1 = cache.clone().to(DEV)
        y1, c2 = conv_step_triton(x.to(DEV), w.to(DEV), None if b is None else b.to(DEV), act, c1)
        assert c2 is c1 and torch.equal(c1.cpu().double(), c0)
        size = (c0.abs() * w.double()[:, 0].abs()).sum(-1) + (0 if b is None else b.double().abs())   # |terms|
        assert bool(((y1.cpu().double() - y0).abs() <= rel * y0.abs() + 2.0 ** -20 * (size + 1)).all())


@settings(max_examples=6, deadline=None)
@given(R=st.integers(1, 3), B=st.integers(1, 3), T=st.integers(1, 9), C=st.integers(1, 6), W=st.integers(1, 4),
       act=st.sampled_from(["silu", None]), seed=st.integers(0, 2**16))
def test_runs_with_their_own_taps_match_the_side_by_side_reference(R, B, T, C, W, act, seed):
    """causal_conv_runs (row r B + b reads run r's taps, in place) against causal_conv_runs_torch (the runs'
    channels side by side, one depthwise convolution) in float64, and against each run alone through
    causal_conv_torch: values and the gradients of x and of every run's taps. Float32 kernels against a float64
    reference: relative error 1e-5 (a few float32 roundings of W-term sums)."""
    from lrnnkit.ops.short_conv import causal_conv_runs, causal_conv_runs_torch
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(R, B, T, C, generator=g, dtype=torch.float64)
    w = torch.randn(R, C, 1, W, generator=g, dtype=torch.float64) / W
    dy = torch.randn(R, B, T, C, generator=g, dtype=torch.float64)
    xk, wk = x.to(DEV, torch.float32).requires_grad_(True), w.to(DEV, torch.float32).requires_grad_(True)
    xr, wr = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    y = causal_conv_runs(xk, wk, act)
    y0 = causal_conv_runs_torch(xr, wr, act)
    alone = torch.stack([causal_conv_torch(x[r], w[r], None, act) for r in range(R)])
    _close(y0, alone, 1e-12)
    _close(y.cpu(), y0, 1e-5)
    gk = torch.autograd.grad(y, (xk, wk), dy.to(DEV, torch.float32))
    g0 = torch.autograd.grad(y0, (xr, wr), dy)
    for a, b in zip(gk, g0):
        assert a.shape == b.shape
        _close(a.cpu(), b, 1e-5)
