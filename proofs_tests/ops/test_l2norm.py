"""The row normalisation of DeltaNet-style keys and queries (:mod:`lrnnkit.ops.l2norm`): the Triton pass forward
and backward against the float64 reference, values and gradients (on a CPU the kernels run in the Triton
interpreter; on a GPU compiled, bf16 included)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.l2norm import l2norm, l2norm_torch

DEV = "cpu" if INTERPRET else "cuda"


def _rel(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


@settings(max_examples=15 if INTERPRET else 60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=0, max_size=2), D=st.integers(1, 70), scale=st.sampled_from(
    [1e-4, 1.0, 1e3]), seed=st.integers(0, 99))
def test_matches_float64_reference(shape, D, scale, seed):
    # float32 in, fp32 inside, against the float64 reference: relative L2 error <= 1e-5 for the values (a sum of D
    # squares, one rsqrt and a few products, each rounded once to fp32: ~2^-24 relative per operation); tiny rows
    # (scale 1e-4) exercise the eps inside the root, where y is far from unit length. The gradient
    # r (dy - y <y, dy>) cancels where dy is radial (D = 1: all that is left is r dy eps / (||x||^2 + eps)), so its
    # fp32 error is bounded relative to the terms it subtracts, r ||dy||, not relative to the result: <= 1e-5 of that
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, D, generator=g, dtype=torch.float64) * scale
    dy = torch.randn(*shape, D, generator=g, dtype=torch.float64)
    x32 = x.float().to(DEV).requires_grad_(True)
    x64 = x.clone().requires_grad_(True)
    y = l2norm(x32, backend="triton")
    y0 = l2norm_torch(x64)
    assert y.dtype == torch.float32 and y.shape == x.shape
    assert _rel(y.cpu(), y0) <= 1e-5
    (gx,) = torch.autograd.grad(y, x32, dy.float().to(DEV))
    (g0,) = torch.autograd.grad(y0, x64, dy)
    r = torch.rsqrt(x.square().sum(-1, keepdim=True) + 1e-6)
    assert float((gx.cpu().double() - g0).norm()) <= 1e-5 * float((r * dy).norm())


def test_gradient_is_the_analytic_one():
    # dx = r (dy - y <y, dy>): orthogonal to y up to eps, so a unit row's gradient has no radial part
    x = torch.randn(6, 32, dtype=torch.float64, device=DEV)
    x = x / x.norm(dim=-1, keepdim=True) * 10
    x.requires_grad_(True)
    dy = torch.randn(6, 32, dtype=torch.float64, device=DEV)
    y = l2norm(x.float(), backend="triton")
    (gx,) = torch.autograd.grad(y, x, dy.float())
    assert float((gx.double() * y.double()).sum(-1).abs().max()) < 1e-6


def test_zero_rows_and_eps():
    x = torch.zeros(3, 8, device=DEV)
    x[1, 0] = 2.0
    y = l2norm(x, backend="triton")
    assert torch.equal(y[0], torch.zeros(8, device=DEV))
    assert abs(float(y[1, 0]) - 2.0 / (4.0 + 1e-6) ** 0.5) < 1e-7


@pytest.mark.skipif(INTERPRET, reason="bf16 rounding matters compiled; the interpreter computes in fp32")
def test_bf16_compiled():
    # bf16 in and out, fp32 inside: one bf16 rounding of the result (2^-8 relative)
    x = torch.randn(512, 128, 12, 32, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    y = l2norm(x)
    y0 = l2norm_torch(x.detach().double().requires_grad_(True))
    assert _rel(y, y0) <= 8e-3
    (gx,) = torch.autograd.grad(y, x, dy)
    x64 = x.detach().double().requires_grad_(True)
    (g0,) = torch.autograd.grad(l2norm_torch(x64), x64, dy.double())
    assert _rel(gx, g0) <= 8e-3


def test_backends():
    x = torch.randn(4, 5, dtype=torch.float64)
    assert torch.equal(l2norm(x), l2norm_torch(x))            # CPU / float64: the reference
    with pytest.raises(InputError, match="unknown backend 'cuda'"):
        l2norm(x, backend="cuda")
