"""lrnnkit.ops.linear_scan: the doubling scan (elementwise and matrix form) against the sequential loop, and the
backward of a linear recurrence as the same recurrence reversed, for any kernel and rules a scan supplies (here a
sequential loop with dense matrices), against autograd through that loop."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.ops.linear_scan import Recurrence, differentiable_scan, doubling_scan, following, previous


def _loop(A, b):
    """h_t = A_t h_{t-1} + b_t along dim 1, A (B, T, n, n), b (B, T, n): the reference, autograd through it."""
    h, out = torch.zeros_like(b[:, 0]), []
    for t in range(b.shape[1]):
        h = torch.einsum("bij,bj->bi", A[:, t], h) + b[:, t]
        out.append(h)
    return torch.stack(out, 1)


DENSE = Recurrence(kernel=lambda A, b: _loop(A.detach(), b.detach()),     # the kernel is not differentiated
                   adjoint=lambda A: following(A.transpose(-1, -2)),
                   coefficient_grad=lambda db, h_prev: db[..., :, None] * h_prev[..., None, :])


def test_shifts():
    x = torch.arange(6.0).reshape(1, 3, 2)
    assert previous(x).tolist() == [[[0.0, 0.0], [0.0, 1.0], [2.0, 3.0]]]
    assert following(x).tolist() == [[[2.0, 3.0], [4.0, 5.0], [0.0, 0.0]]]


@settings(max_examples=25, deadline=None)
@given(B=st.integers(1, 3), T=st.integers(1, 9), n=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_the_reverse_scan_gives_autograds_gradients(B, T, n, seed):
    """Values and both gradients of a dense recurrence against autograd through the loop; float64, tolerance 1e-12
    (sums of at most 9 products of matrices of norm <= 1: each term O(1), re-associated)."""
    g = torch.Generator().manual_seed(seed)
    A = ((torch.rand(B, T, n, n, generator=g, dtype=torch.float64) - 0.5) * (2.0 / n)).requires_grad_()
    b = torch.randn(B, T, n, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(B, T, n, generator=g, dtype=torch.float64)
    h, h0 = differentiable_scan(DENSE, A, b), _loop(A, b)
    torch.testing.assert_close(h, h0, rtol=0, atol=1e-12)
    got = torch.autograd.grad((h * w).sum(), (A, b))
    want = torch.autograd.grad((h0 * w).sum(), (A, b))
    for x, y in zip(got, want):
        torch.testing.assert_close(x, y, rtol=0, atol=1e-12)


def test_without_gradients_only_the_kernel_runs():
    calls = []
    rec = Recurrence(kernel=lambda A, b: calls.append(1) or _loop(A, b), adjoint=None, coefficient_grad=None)
    A, b = torch.zeros(1, 2, 2, 2), torch.ones(1, 2, 2)
    assert differentiable_scan(rec, A, b).tolist() == [[[1.0, 1.0], [1.0, 1.0]]] and calls == [1]


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 17), n=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_the_doubling_scan_is_the_loop(T, n, seed):
    """Elementwise (B, T, 2, n) and matrix (B, T, 2, n, n) forms against the loop; float64, tolerance 1e-12."""
    g = torch.Generator().manual_seed(seed)
    A = (torch.rand(2, T, 2, n, n, generator=g, dtype=torch.float64) - 0.5) * (2.0 / n)
    b = torch.randn(2, T, 2, n, generator=g, dtype=torch.float64)
    want = torch.stack([_loop(A[:, :, k], b[:, :, k]) for k in range(2)], 2)
    torch.testing.assert_close(doubling_scan(A, b, matrix=True), want, rtol=0, atol=1e-12)
    a = torch.diagonal(A, dim1=-2, dim2=-1)
    want = torch.stack([_loop(torch.diag_embed(a[:, :, k]), b[:, :, k]) for k in range(2)], 2)
    torch.testing.assert_close(doubling_scan(a, b), want, rtol=0, atol=1e-12)
