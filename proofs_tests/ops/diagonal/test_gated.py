"""The diagonal mixer's fused gated scan (lrnnkit.ops.diagonal.gated) against its torch expression: outputs, the
gradients of the input projection and of the decay parameter, per run; both eigenvalue ranges; softplus's three
branches (above the threshold, near zero, far below); a finite-difference check of the backward alone. Run in the
Triton interpreter on CPU tensors (compiled on CUDA where the interpreter is off)."""
from __future__ import annotations

import pytest
import torch

from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.diagonal import gated
from lrnnkit.ops.diagonal.gated import gated_scan, gated_scan_fused, gated_scan_reference
from lrnnkit.ops.diagonal.naive import diagonal_scan_naive

DEV = "cpu" if INTERPRET or not torch.cuda.is_available() else "cuda"
pytestmark = pytest.mark.skipif(not INTERPRET and not torch.cuda.is_available(),
                                reason="Triton kernels need TRITON_INTERPRET=1 or a GPU")


def _inputs(R, B, T, D, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(R, B, T, 3 * D, generator=g, dtype=torch.float64)
    y[..., 0, 0] = 25.0          # softplus above its threshold (x itself)
    y[..., 1, 1 % D] = -30.0     # far below: softplus(x) ~ e^x, the series branch
    w = 0.5 * torch.randn(R, D, generator=g, dtype=torch.float64)
    return y.to(dtype).to(DEV), w.to(dtype).to(DEV)


def _both(y, w, neg, out_dtype=None):
    """Outputs and gradients (of a fixed random weighting of the output) of the fused kernels and the reference."""
    res = []
    for f in (lambda a, b: gated_scan_fused(a.reshape(-1, *a.shape[-2:]), b, neg, out_dtype).reshape(
                  *a.shape[:-1], -1),
              lambda a, b: gated_scan_reference(a, b, neg, out_dtype)):
        a, b = y.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        out = f(a, b)
        wt = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape).to(out)
        (out * wt).sum().backward()
        res.append((out.detach(), a.grad, b.grad))
    return res


@pytest.mark.parametrize("neg", [True, False], ids=["[-1,1]", "[0,1]"])
def test_fused_equals_the_torch_expression_in_float64(neg):
    """Two runs of three rows, T = 7, D = 5 (a masked channel block): the same values and gradients to 1e-10 (the
    same arithmetic in another order; softplus far below zero by its series, exact to ~1e-13 there)."""
    y, w = _inputs(2, 3, 7, 5, torch.float64)
    (o1, dy1, dw1), (o2, dy2, dw2) = _both(y, w, neg)
    assert o1.dtype == torch.float64 and o1.shape == (2, 3, 7, 5)
    # the module text's equations written out, on the family's sequential reference (ops/diagonal/naive.py)
    dt, b, z = y.cpu().chunk(3, -1)
    s = torch.exp(-torch.nn.functional.softplus(dt) * torch.exp(w.cpu())[:, None, None, :])
    a = 2 * s - 1 if neg else s
    h = diagonal_scan_naive(a.reshape(6, 7, 5), b.reshape(6, 7, 5), validate=False).reshape(2, 3, 7, 5)
    assert torch.allclose(o1.cpu(), h * z * torch.sigmoid(z), rtol=1e-10, atol=1e-12)
    for got, want in ((o1, o2), (dy1, dy2), (dw1, dw2)):
        assert float(want.abs().max()) > 1e-3
        assert torch.allclose(got, want, rtol=1e-10, atol=1e-12), float((got - want).abs().max())


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.bfloat16, 1e-5)])
def test_fused_in_float32_and_bfloat16_inputs(dtype, tol):
    """float32 and bfloat16 inputs: the state in float32 on both sides, ``out`` and ``dy`` in the input's dtype, the
    output in float32 where asked (the mixer casts to its input's dtype); outputs and ``dw`` agree to ``tol``
    relative to their largest entry (float32 sums in another order), ``dy`` to one rounding of its dtype."""
    y, w = _inputs(2, 2, 9, 16, dtype, seed=1)
    (o1, dy1, dw1), (o2, dy2, dw2) = _both(y, w, True, torch.float32)
    assert o1.dtype == torch.float32 and dy1.dtype == dtype and dw1.dtype == dtype
    scale = float(o2.abs().max())
    assert float((o1 - o2).abs().max()) <= tol * scale
    ulp = 2.0 ** -8 if dtype == torch.bfloat16 else 1e-5
    assert float((dy1.float() - dy2.float()).abs().max()) <= 2 * ulp * float(dy2.float().abs().max())
    assert float((dw1.float() - dw2.float()).abs().max()) <= max(tol, ulp) * 4 * float(dw2.float().abs().max())


def test_backward_against_finite_differences():
    """torch.autograd.gradcheck of the fused function alone (float64, two runs, T = 4, D = 3)."""
    y, w = _inputs(2, 2, 4, 3, torch.float64, seed=2)
    y = y.reshape(4, 4, 9)
    y[:, 0, 0] = 0.3                 # away from the threshold's kink for the finite differences
    assert torch.autograd.gradcheck(lambda a, b: gated_scan_fused(a, b, True), (y.requires_grad_(),
                                                                               w.requires_grad_()),
                                    eps=1e-6, atol=1e-6)


def test_dispatch_and_refusals(monkeypatch):
    """On CPU tensors gated_scan is the torch expression whatever FUSED_ON_CUDA says; one run's (D,) weight equals
    an (1, D) one; shapes that do not fit are refused, naming them."""
    y, w = _inputs(1, 2, 5, 4, torch.float64, seed=3)
    monkeypatch.setattr(gated, "FUSED_ON_CUDA", True)
    if DEV == "cpu":
        def no_fused(*a, **k):
            raise AssertionError("the fused kernels ran on CPU tensors")
        monkeypatch.setattr(gated, "gated_scan_fused", no_fused)
        assert torch.equal(gated_scan(y, w, True), gated_scan_reference(y, w, True))
        monkeypatch.undo()
    flat = y.reshape(2, 5, 12)
    assert torch.allclose(gated_scan_fused(flat, w[0], True), gated_scan_fused(flat, w, True), rtol=0, atol=0)
    grad_on = gated_scan_fused(flat.clone().requires_grad_(), w, True)      # states kept for a backward
    with torch.no_grad():                                                    # none kept: the same outputs
        assert torch.equal(gated_scan_fused(flat.clone().requires_grad_(), w, True), grad_on.detach())
    with pytest.raises(ValueError, match=r"\(N, T, 3D\)"):
        gated_scan_fused(flat[..., :11], w, True)
    with pytest.raises(ValueError, match="R \\| N"):
        gated_scan_fused(flat[:1], torch.zeros(2, 4, dtype=flat.dtype), True)
