"""Diagonal, block-diagonal and bilinear layers: Triton kernels vs their naive sequential torch references.

Bounds: relative Frobenius error against the float64 naive loop on the same inputs. Diagonal entries lie in
[-1, 1] (contractions), so per-step rounding is not amplified: ``(T + 1) * 4 * u``; the associative scan
re-associates products within a chunk, adding ``log2(C)`` roundings per element: ``(T + 1) * (4 + log2 C) * u``.
Block-diagonal / bilinear blocks are drawn with spectral norm <= 1 (scaled by their norm) for the same reason,
with ``(T + 1) * (d + 4) * u`` (a d-term dot per step). float32: u = 2^-24; float64: u = 2^-53.
"""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.ops._triton import INTERPRET
from lrnnkit.ops.bilinear.fused_recurrent import bilinear_scan_fused
from lrnnkit.ops.bilinear.naive import bilinear_scan_naive
from lrnnkit.ops.block_diagonal.fused_recurrent import block_diagonal_scan_fused
from lrnnkit.ops.block_diagonal.naive import block_diagonal_scan_naive
from lrnnkit.ops.diagonal.chunk import diagonal_scan_chunk
from lrnnkit.ops.diagonal.fused_recurrent import diagonal_scan_fused
from lrnnkit.ops.diagonal.naive import diagonal_scan_naive

DEV = "cpu" if INTERPRET else "cuda"   # Triton interpreter on CPU tensors, else compiled on CUDA
U = {torch.float64: 2.0 ** -53, torch.float32: 2.0 ** -24}
dtypes = st.sampled_from([torch.float64, torch.float32])
seeds = st.integers(0, 2 ** 31 - 1)


def rel(a, b):
    a, b = a.double(), b.double()
    assert torch.isfinite(a).all()
    return float((a - b).norm() / b.norm())


def contraction(shape, gen):
    """Random square matrices (last two axes) scaled to spectral norm <= 1."""
    A = torch.randn(*shape, dtype=torch.float64, generator=gen)
    return A / torch.linalg.matrix_norm(A, ord=2)[..., None, None].clamp_min(1.0)


@pytest.mark.triton
@settings(max_examples=4, deadline=None)
@given(st.integers(1, 2), st.integers(1, 70), st.integers(1, 20), dtypes, st.booleans(), seeds)
def test_diagonal_kernels(B, T, D, dtype, with_h0, seed):
    gen = torch.Generator().manual_seed(seed)
    a = (2 * torch.rand(B, T, D, dtype=torch.float64, generator=gen) - 1).to(dtype)
    a[:, ::5] = -1.0  # the ends of the eigenvalue range occur
    b = torch.randn(B, T, D, dtype=torch.float64, generator=gen).to(dtype)
    h0 = torch.randn(B, D, dtype=torch.float64, generator=gen).to(dtype) if with_h0 else None
    a, b, h0 = a.to(DEV), b.to(DEV), (None if h0 is None else h0.to(DEV))
    ref = diagonal_scan_naive(a.double(), b.double(), None if h0 is None else h0.double())
    out = diagonal_scan_fused(a, b, h0)
    assert out.dtype == dtype and rel(out, ref) <= (T + 1) * 4 * U[dtype]
    out = diagonal_scan_chunk(a, b, h0, chunk_size=16)
    assert rel(out, ref) <= (T + 1) * (4 + 4) * U[dtype]


@pytest.mark.triton
@settings(max_examples=4, deadline=None)
@given(st.integers(1, 2), st.integers(1, 12), st.integers(1, 3), st.integers(1, 5), dtypes, seeds)
def test_block_diagonal_kernel(B, T, NB, BS, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    A = contraction((B, T, NB, BS, BS), gen).to(dtype)
    b = torch.randn(B, T, NB, BS, dtype=torch.float64, generator=gen).to(dtype)
    h0 = torch.randn(B, NB, BS, dtype=torch.float64, generator=gen).to(dtype)
    A, b, h0 = A.to(DEV), b.to(DEV), h0.to(DEV)
    ref = block_diagonal_scan_naive(A.double(), b.double(), h0.double())
    out = block_diagonal_scan_fused(A, b, h0)
    assert rel(out, ref) <= (T + 1) * (BS + 4) * U[dtype]


@pytest.mark.triton
@settings(max_examples=4, deadline=None)
@given(st.integers(1, 2), st.integers(1, 10), st.integers(1, 4), st.integers(1, 6), dtypes, st.booleans(), seeds)
def test_bilinear_kernel(B, T, DIN, d, dtype, with_b, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.softmax(torch.randn(B, T, DIN, dtype=torch.float64, generator=gen), -1).to(dtype)  # convex weights
    W = contraction((DIN, d, d), gen).to(dtype)   # so W(x) is a contraction too
    b = torch.randn(B, T, d, dtype=torch.float64, generator=gen).to(dtype) if with_b else None
    h0 = torch.randn(B, d, dtype=torch.float64, generator=gen).to(dtype)
    x, W, h0 = x.to(DEV), W.to(DEV), h0.to(DEV)
    b = None if b is None else b.to(DEV)
    ref = bilinear_scan_naive(x.double(), W.double(), None if b is None else b.double(), h0.double())
    out = bilinear_scan_fused(x, W, b, h0)
    assert rel(out, ref) <= (T + 1) * (d + DIN + 4) * U[dtype]


def test_bad_inputs_refused():
    a = torch.full((1, 3, 2), 0.5)
    with pytest.raises(InputError, match=r"\[-1.0, 1.0\]"):
        diagonal_scan_naive(a * 3, a)
    with pytest.raises(InputError, match="NaN"):
        diagonal_scan_naive(a, a.clone().fill_(float("nan")))
    with pytest.raises(InputError, match="shape"):
        diagonal_scan_naive(a, a[:, :2])
    with pytest.raises(InputError, match="square"):
        block_diagonal_scan_naive(torch.zeros(1, 2, 1, 2, 3), torch.zeros(1, 2, 1, 2))
    with pytest.raises(InputError, match="W"):
        bilinear_scan_naive(torch.zeros(1, 2, 3), torch.zeros(2, 4, 4))


@pytest.mark.triton
def test_kernels_refuse_bad_inputs_too():
    a = torch.full((1, 3, 2), 0.5, device=DEV)
    with pytest.raises(InputError):
        diagonal_scan_fused(a * 3, a)
    with pytest.raises(InputError):
        diagonal_scan_chunk(a, a.clone().fill_(float("inf")))
    with pytest.raises(InputError):
        block_diagonal_scan_fused(torch.zeros(1, 2, 1, 2, 2, device=DEV),
                                  torch.full((1, 2, 1, 2), float("nan"), device=DEV))


def _gh(mode):
    """The GH family's kernels by mode, called in fla's order (q, k, v, g, beta): ``chunk_gh``'s Triton chunk
    kernels and sequential loop, and the fused recurrent kernel (inference only)."""
    from lrnnkit.ops.gh.api import chunk_gh
    from lrnnkit.ops.gh.fused_recurrent import fused_recurrent_delta_product

    def run(q, k, v, g, beta, initial_state=None, output_final_state=False):
        if mode == "fused_recurrent":
            return fused_recurrent_delta_product(q, k, v, beta, g, scale=0.5, initial_state=initial_state,
                                                 output_final_state=output_final_state)
        return chunk_gh(q, k, v, g, beta, k.shape[2], scale=0.5, initial_state=initial_state,
                        output_final_state=output_final_state, backend=mode)
    return run


@pytest.mark.triton
@pytest.mark.parametrize("mode", ["chunk", "fused_recurrent", "naive"])
def test_layer_modules_dispatch(mode):
    """The nn.Module front-ends (and the GH kernels by mode) compute their naive reference (float64, so the bound
    is the float64 one)."""
    from lrnnkit.layers.scans import DiagonalLayer
    gen = torch.Generator().manual_seed(int(torch.randint(0, 2 ** 31, ())))
    q = torch.randn(1, 9, 2, 8, dtype=torch.float64, generator=gen)
    k = torch.nn.functional.normalize(torch.randn(1, 9, 2, 2, 8, dtype=torch.float64, generator=gen), dim=-1)
    v = torch.randn(1, 9, 2, 2, 8, dtype=torch.float64, generator=gen)
    beta = 2 * torch.rand(1, 9, 2, 2, dtype=torch.float64, generator=gen)
    q, k, v, beta = (x.to(DEV) for x in (q, k, v, beta))
    o, _ = _gh(mode)(q, k, v, None, beta)
    r, _ = _gh("naive")(q, k, v, None, beta)
    assert rel(o, r) <= 1e-12
    if mode != "naive":   # with a gate and an initial state, and (chunk) gradients, against the naive mode
        g = (-0.5 * torch.rand(1, 9, 2, dtype=torch.float64, generator=gen)).to(DEV)
        h0 = torch.randn(1, 2, 8, 8, dtype=torch.float64, generator=gen).to(DEV)
        outs = {}
        for m in (mode, "naive"):
            xs = [x.detach().clone().requires_grad_(True) for x in (q, k, v, g, beta, h0)]
            if m == "fused_recurrent":   # inference only
                with torch.no_grad():
                    outs[m] = [_gh(m)(*xs[:5], initial_state=xs[5])[0]]
                continue
            out, ht = _gh(m)(*xs[:5], initial_state=xs[5], output_final_state=True)
            (out.sum() + ht.sum()).backward()
            outs[m] = [out.detach()] + [x.grad for x in xs]
        for a_, r_ in zip(outs[mode], outs["naive"]):
            assert rel(a_, r_) <= 1e-11
    a = (2 * torch.rand(1, 20, 3, dtype=torch.float64, generator=gen) - 1).to(DEV)
    b = torch.randn(1, 20, 3, dtype=torch.float64, generator=gen).to(DEV)
    assert rel(DiagonalLayer(mode)(a, b), diagonal_scan_naive(a, b)) <= 1e-13
    with pytest.raises(InputError, match="mode"):
        DiagonalLayer("fast")
