"""lrnnkit.ops.block_diagonal.differentiable: the block-diagonal scan (paper 002, eq. 5) and its reverse-scan
backward, on the torch doubling scan (CPU) and on the fused Triton kernel (CUDA's path, here through the
interpreter), against autograd through the sequential reference loop."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.ops.block_diagonal import differentiable as bd
from lrnnkit.ops.block_diagonal.naive import block_diagonal_scan_naive

D64 = torch.float64


def _inputs(B, T, NB, BS, seed, reset=None):
    g = torch.Generator().manual_seed(seed)
    A = (torch.rand(B, T, NB, BS, BS, generator=g, dtype=D64) - 0.5) * (2.0 / BS)   # ||A|| <= 1 per block
    if reset is not None:
        A[:, reset] = 0
    A.requires_grad_()
    b = torch.randn(B, T, NB, BS, generator=g, dtype=D64, requires_grad=True)
    w = torch.randn(B, T, NB, BS, generator=g, dtype=D64)
    return A, b, w


def _check(A, b, w):
    """Values and both gradients against the loop; float64, tolerance 1e-12 (re-associated sums of at most 13
    products of blocks of norm <= 1, each term O(1))."""
    h = bd.block_diagonal_scan(A, b)
    h0 = block_diagonal_scan_naive(A, b, validate=False)
    torch.testing.assert_close(h, h0, rtol=0, atol=1e-12)
    got = torch.autograd.grad((h * w).sum(), (A, b))
    want = torch.autograd.grad((h0 * w).sum(), (A, b))
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y, rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(B=st.integers(1, 3), T=st.integers(1, 13), NB=st.integers(1, 3), BS=st.integers(1, 4),
       seed=st.integers(0, 2**16), reset=st.booleans())
def test_doubling_scan_and_its_backward_match_the_loop(B, T, NB, BS, seed, reset):
    _check(*_inputs(B, T, NB, BS, seed, reset=T // 2 if reset else None))


def test_without_gradients_it_is_the_forward_alone():
    A, b, _ = _inputs(2, 5, 2, 3, 0)
    with torch.no_grad():
        h = bd.block_diagonal_scan(A, b)
    assert not h.requires_grad
    torch.testing.assert_close(h, block_diagonal_scan_naive(A, b, validate=False), rtol=0, atol=1e-12)


def test_the_fused_kernel_runs_both_passes(monkeypatch):
    """The CUDA path (the fused recurrent kernel forward and, on the reversed transposed blocks, backward) through
    the Triton interpreter on CPU tensors, with a reset (A = 0) inside; the kernel must run twice."""
    from lrnnkit.ops._triton import INTERPRET
    if not INTERPRET:
        pytest.skip("needs TRITON_INTERPRET=1 (CPU tensors through the Triton interpreter)")
    from lrnnkit.ops.block_diagonal.fused_recurrent import block_diagonal_scan_fused
    calls = []

    def kernel(A, b):
        calls.append(A.shape)
        return block_diagonal_scan_fused(A.contiguous(), b.contiguous(), validate=False)
    monkeypatch.setattr(bd, "_kernel", kernel)
    _check(*_inputs(2, 11, 3, 4, 7, reset=6))
    assert len(calls) == 2
